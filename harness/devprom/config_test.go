package devprom_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openlayer-ai/workspace-service/harness/devprom"
)

// The deployment's file rewritten: the named jobs scrape exactly the given
// loopback addresses (its dns_sd_configs gone), the others are dropped,
// rule_files point at the deploy folder, and the interval is the test's.
func TestRewriteDeploymentConfig(t *testing.T) {
	path, err := devprom.FindConfig()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := devprom.Rewrite(src, filepath.Dir(path), map[string][]string{
		"api":    {"127.0.0.1:1001", "127.0.0.1:1002"},
		"worker": {"127.0.0.1:2001"},
	}, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Global        map[string]string `yaml:"global"`
		RuleFiles     []string          `yaml:"rule_files"`
		ScrapeConfigs []map[string]any  `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Global["scrape_interval"] != "500ms" || cfg.Global["evaluation_interval"] != "500ms" || cfg.Global["scrape_timeout"] != "500ms" {
		t.Errorf("global = %v, want every interval 500ms", cfg.Global)
	}
	if want := filepath.Join(filepath.Dir(path), "alerts.yml"); len(cfg.RuleFiles) != 1 || cfg.RuleFiles[0] != want {
		t.Errorf("rule_files = %v, want [%s]", cfg.RuleFiles, want)
	}
	got := map[string]string{}
	for _, job := range cfg.ScrapeConfigs {
		if _, ok := job["dns_sd_configs"]; ok {
			t.Errorf("job %v keeps its dns_sd_configs", job["job_name"])
		}
		static := job["static_configs"].([]any)[0].(map[string]any)["targets"].([]any)
		var addrs []string
		for _, a := range static {
			addrs = append(addrs, a.(string))
		}
		got[job["job_name"].(string)] = strings.Join(addrs, ",") + " " + job["metrics_path"].(string)
	}
	want := map[string]string{"api": "127.0.0.1:1001,127.0.0.1:1002 /metrics", "worker": "127.0.0.1:2001 /metrics"}
	if len(got) != len(want) || got["api"] != want["api"] || got["worker"] != want["worker"] {
		t.Errorf("jobs = %v, want %v", got, want)
	}
}

// A job the configuration lacks is an error, not a silent no-op: a test
// would otherwise wait for series that nothing scrapes.
func TestRewriteUnknownJob(t *testing.T) {
	_, err := devprom.Rewrite([]byte("scrape_configs:\n  - job_name: api\n"), "/", map[string][]string{"apii": {"127.0.0.1:1"}}, 0)
	if err == nil || !strings.Contains(err.Error(), "apii") {
		t.Fatalf("err = %v, want one naming the job apii", err)
	}
}

// The deployment scrapes every replica: the api and worker jobs find
// their targets through DNS (compose's resolver answers a service name
// with every replica's address), so --scale needs no change here.
func TestDeploymentDiscoversReplicas(t *testing.T) {
	path, err := devprom.FindConfig()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			Job string `yaml:"job_name"`
			DNS []struct {
				Names []string `yaml:"names"`
				Type  string   `yaml:"type"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(src, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"api": 8080, "worker": 9090}
	for _, j := range cfg.ScrapeConfigs {
		port, ok := want[j.Job]
		if !ok {
			continue
		}
		if len(j.DNS) != 1 || j.DNS[0].Type != "A" || j.DNS[0].Port != port || len(j.DNS[0].Names) != 1 || j.DNS[0].Names[0] != j.Job {
			t.Errorf("job %s: dns_sd_configs = %+v, want names [%s], type A, port %d", j.Job, j.DNS, j.Job, port)
		}
		delete(want, j.Job)
	}
	if len(want) > 0 {
		t.Errorf("jobs missing: %v", want)
	}
}
