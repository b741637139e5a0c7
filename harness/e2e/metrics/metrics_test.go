package metrics_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/devprom"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// checkTimeout bounds each check's wait for its series: the traffic's
// effects reach a scrape within seconds (scrapes every second, the
// backlog read every 10 s, the key's expiry applied when its workflow
// wakes, 5 s after it was made).
const checkTimeout = 30 * time.Second

// check is one thing Prometheus must find: a query that returns at least
// one series once the traffic has been scraped.
type check struct {
	what  string
	query string
}

// A real Prometheus, on the deployment's own configuration with loopback
// targets, scrapes the real api and worker processes after some traffic,
// and finds through its HTTP API: both jobs up; an HTTP series of each
// process labelled by route template; the Temporal SDK's series of each
// process, labelled by namespace and task queue; the webhook delivery
// series; the key lifecycle counter from both processes; the outbox
// backlog gauges, measuring a backlog the test made; and every metric
// name that deploy/prometheus/alerts.yml uses, so no alert watches a
// series that does not exist.
func TestPrometheusScrapesTheService(t *testing.T) {
	devprom.RequireBinary(t)
	ctx := context.Background()
	// The PostgreSQL server user must be able to traverse the folder.
	dir, err := os.MkdirTemp("", "metrics-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("E2E_BIN") // make test keeps them in bin/e2e
	if bin == "" {
		bin = filepath.Join(dir, "bin")
	}
	begin := time.Now()
	if err := procstack.BuildBinaries(bin); err != nil {
		t.Fatal(err)
	}
	t.Logf("binaries in %s (built in %v)", bin, time.Since(begin).Round(time.Second))

	// An HTTPS receiver the worker trusts through SSL_CERT_FILE: /ok
	// answers 200, /fail 500.
	receiver := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer receiver.Close()
	certFile := filepath.Join(dir, "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}

	begin = time.Now()
	st, err := procstack.Start(ctx, procstack.Options{
		Dir: dir, Bin: bin, CertFile: certFile, TaskQueue: "metrics",
		// Two attempts 200 ms apart: the failing endpoint is exhausted at once.
		RetrySchedule: "200ms",
	})
	defer func() {
		if st != nil {
			st.Stop()
		}
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	}()
	if err != nil {
		t.Fatalf("start the stack: %v (logs in %s)", err, dir)
	}
	prom, err := devprom.Start(ctx, devprom.Options{
		Targets: map[string][]string{"api": {st.APIAddr}, "worker": {st.WorkerAddr}},
		// The deployment scrapes every 15 s; a second keeps the test short.
		ScrapeInterval: time.Second,
		Dir:            filepath.Join(dir, "prometheus"),
	})
	if err != nil {
		t.Fatalf("start prometheus: %v (logs in %s)", err, dir)
	}
	defer prom.Stop()
	t.Logf("stack and prometheus up in %v; logs in %s", time.Since(begin).Round(time.Second), dir)

	begin = time.Now()
	sendTraffic(t, ctx, st, receiver.URL)
	checks := []check{
		{"the api job up", `up{job="api"} == 1`},
		{"the worker job up", `up{job="worker"} == 1`},
		{"an api HTTP series labelled by route template",
			`api_http_requests_total{job="api", method="POST", route="/v1/workspaces/{workspaceId}/events", code="202"} >= 1`},
		{"a worker HTTP series labelled by route",
			`worker_http_requests_total{job="worker", method="GET", route="/metrics", code="200"} >= 1`},
		{"the worker's workflow-task schedule-to-start latency (Temporal SDK)",
			`temporal_workflow_task_schedule_to_start_latency_seconds_count{job="worker", namespace="default", task_queue="metrics", workflow_type="DeliveryWorkflow"} >= 1`},
		{"the worker's activity schedule-to-start latency (Temporal SDK)",
			`temporal_activity_schedule_to_start_latency_seconds_count{job="worker", namespace="default", task_queue="metrics", activity_type="AttemptDelivery"} >= 1`},
		{"the worker's task slots (Temporal SDK)",
			`temporal_worker_task_slots_available{job="worker", namespace="default", task_queue="metrics", worker_type="ActivityWorker"}`},
		{"the worker's sticky cache (Temporal SDK)", `temporal_sticky_cache_size{job="worker", namespace="default"}`},
		{"the worker's activity pollers (Temporal SDK)",
			`temporal_num_pollers{job="worker", namespace="default", task_queue="metrics", poller_type="activity_task"} >= 1`},
		{"an activity failure (Temporal SDK): the undecryptable secret",
			`temporal_activity_execution_failed_total{job="worker", activity_type="AttemptDelivery"} >= 1`},
		{"the api's Temporal requests (Temporal SDK)",
			`temporal_request_total{job="api", namespace="default", operation="SignalWithStartWorkflowExecution"} >= 1`},
		{"a delivered attempt", `webhook_delivery_attempts_total{job="worker", outcome="success"} >= 1`},
		{"a failed attempt", `webhook_delivery_attempts_total{job="worker", outcome="http_error"} >= 2`},
		{"an exhausted delivery", `webhook_deliveries_exhausted_total{job="worker"} >= 1`},
		{"an undecryptable secret", `webhook_secret_undecryptable_total{job="worker"} >= 1`},
		{"an event accepted", `webhook_events_accepted_total{job="api", type="test.created"} >= 1`},
		{"keys created (api)", `api_key_lifecycle_events_total{job="api", event="created"} >= 2`},
		{"a key rotated (api)", `api_key_lifecycle_events_total{job="api", event="rotated"} >= 1`},
		{"a key revoked (api)", `api_key_lifecycle_events_total{job="api", event="revoked"} >= 1`},
		{"a key expired (worker)", `api_key_lifecycle_events_total{job="worker", event="expired"} >= 1`},
		{"the outbox backlog: the event whose claim is held",
			`webhook_outbox_undispatched_events{job="worker"} == 1`},
		{"the outbox backlog's age: that event's hour",
			`webhook_outbox_oldest_undispatched_age_seconds{job="worker"} > 3500`},
	}
	// Each check polls for up to checkTimeout of its own: on a loaded
	// machine one slow series must not leave the later checks a single
	// try, as a budget shared by all did.
	for _, c := range checks {
		checkBegin := time.Now()
		got, err := prom.WaitQuery(ctx, c.query, checkTimeout)
		if err != nil {
			t.Errorf("%s: %v; answer %v", c.what, err, got)
			continue
		}
		t.Logf("found %s after %v: %s", c.what, time.Since(checkBegin).Round(10*time.Millisecond), describe(got))
	}

	// Every metric an alert or a dashboard panel uses exists, now that
	// the traffic made the series that appear on first use (failures,
	// exhaustion) appear; and every panel's query runs.
	names, err := prom.MetricNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := devprom.FindConfig()
	if err != nil {
		t.Fatal(err)
	}
	deploy := filepath.Dir(filepath.Dir(cfg))
	alerts, err := alertExprs(filepath.Join(deploy, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	panels, err := dashboardExprs(filepath.Join(deploy, "grafana", "workspace-service.json"))
	if err != nil {
		t.Fatal(err)
	}
	for what, exprs := range map[string][]string{"alerts.yml": alerts, "the Grafana dashboard": panels} {
		used, missing := metricNames(exprs), 0
		for _, n := range used {
			if !slices.Contains(names, n) {
				t.Errorf("%s uses %s, which neither process exports", what, n)
				missing++
			}
		}
		if missing == 0 {
			t.Logf("the %d metric names %s uses all exist: %s", len(used), what, strings.Join(used, ", "))
		}
	}
	for _, e := range panels {
		if _, err := prom.Query(ctx, e); err != nil {
			t.Errorf("dashboard panel query: %v", err)
		}
	}
	var sdk []string
	for _, n := range names {
		if strings.HasPrefix(n, "temporal_") {
			sdk = append(sdk, n)
		}
	}
	t.Logf("Temporal SDK series after the traffic (%d): %s", len(sdk), strings.Join(sdk, " "))
	rules, err := prom.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, health := range rules {
		if health == "err" {
			t.Errorf("rule %s does not evaluate", name)
		}
	}
	// The SDK reports a few series under one name with different label
	// sets; the bridge drops the second and logs it (app/temporal_metrics.go).
	// None of that may happen on these paths.
	for _, log := range []string{st.API.LogPath, st.Worker.LogPath} {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "temporal sdk metric not exported"); n > 0 {
			t.Errorf("%s: %d temporal sdk series dropped (registered twice with different labels)", log, n)
		}
	}
	if t.Failed() {
		targets, _ := prom.Targets(ctx)
		t.Logf("targets: %+v; logs in %s", targets, dir)
	}
	t.Logf("traffic and checks took %v", time.Since(begin).Round(100*time.Millisecond))
}

// describe prints an answer's series briefly.
func describe(samples []devprom.Sample) string {
	var b strings.Builder
	for i, s := range samples {
		if i == 3 {
			fmt.Fprintf(&b, " … (%d series)", len(samples))
			break
		}
		fmt.Fprintf(&b, "%v=%g ", s.Labels, s.Value)
	}
	return b.String()
}
