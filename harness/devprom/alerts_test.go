package devprom_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/devprom"
)

// The deployment's Prometheus files pass promtool: the configuration and
// the alerting rules are valid, and the rules' unit tests
// (deploy/prometheus/alerts_test.yml) pass. `make alerts` runs the same.
func TestPromtool(t *testing.T) {
	bin := devprom.RequireBinary(t)
	promtool := filepath.Join(filepath.Dir(bin), "promtool")
	if _, err := exec.LookPath(promtool); err != nil {
		t.Fatalf("promtool is not beside %s: %v", bin, err)
	}
	cfg, err := devprom.FindConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(cfg)
	for _, args := range [][]string{
		{"check", "config", "prometheus.yml"},
		{"check", "rules", "alerts.yml"},
		{"test", "rules", "alerts_test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
