package devprom_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openlayer-ai/workspace-service/harness/devprom"
)

// A real Prometheus on the deployment's configuration scrapes two
// loopback targets of one job; its HTTP API reports them up and serves
// their series, and it loaded the alerting rules.
func TestPrometheusScrapesLoopbackTargets(t *testing.T) {
	devprom.RequireBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var addrs []string
	for _, v := range []float64{3, 4} {
		reg := prometheus.NewRegistry()
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "devprom_test_value", Help: "A value to find."})
		g.Set(v)
		reg.MustRegister(g)
		srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		defer srv.Close()
		addrs = append(addrs, strings.TrimPrefix(srv.URL, "http://"))
	}
	p, err := devprom.Start(ctx, devprom.Options{
		Targets:        map[string][]string{"api": addrs},
		ScrapeInterval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	got, err := p.WaitQuery(ctx, `sum(devprom_test_value{job="api"}) == 7`, 20*time.Second)
	if err != nil {
		t.Fatalf("%v (answer %v; log in %s)", err, got, p.Dir)
	}
	ups, err := p.WaitQuery(ctx, `count(up{job="api"} == 1) == 2`, 10*time.Second)
	if err != nil {
		t.Fatalf("%v (answer %v)", err, ups)
	}
	targets, err := p.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].Job != "api" || targets[0].Health != "up" || targets[1].Health != "up" {
		t.Errorf("targets = %+v, want the two api targets up", targets)
	}
	rules, err := p.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rules["WebhookOutboxBacklogStale"]; !ok {
		t.Errorf("rules = %v, want the deployment's alerts loaded", rules)
	}
}
