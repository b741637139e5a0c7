package devprom

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ConfigFile is the Prometheus configuration of the compose deployment,
// relative to the module root; FindConfig locates it.
const ConfigFile = "deploy/prometheus/prometheus.yml"

// FindConfig returns the absolute path of ConfigFile, looking for the
// module root (the folder holding go.mod) from the working directory up,
// so it works from a test's package folder and from the repository root.
func FindConfig() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, filepath.FromSlash(ConfigFile)), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: cannot find %s", ConfigFile)
		}
		dir = parent
	}
}

// serviceDiscovery lists the scrape-config keys that find targets. The
// deployment's jobs use dns_sd_configs (compose's resolver names every
// replica); a rewrite replaces all of them with static loopback targets.
var serviceDiscovery = []string{
	"static_configs", "dns_sd_configs", "file_sd_configs", "http_sd_configs",
	"kubernetes_sd_configs", "consul_sd_configs", "docker_sd_configs",
}

// Rewrite returns the configuration cfg with each job's targets replaced:
// a job named in targets scrapes exactly those addresses (static targets),
// whatever service discovery it had; a job not named is dropped, since its
// targets (compose service names) do not resolve outside compose. Every
// other setting is kept: metrics paths, relabelling, rule_files (made
// absolute against configDir, as Prometheus resolves them against the
// configuration's own folder, which the rewritten copy is not in).
//
// A non-zero interval replaces the scrape and evaluation intervals (and
// the scrape timeout, which must not exceed them) everywhere, so a test
// sees series and rule results within seconds; zero keeps the file's.
func Rewrite(cfg []byte, configDir string, targets map[string][]string, interval time.Duration) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(cfg, &doc); err != nil {
		return nil, fmt.Errorf("parse the prometheus configuration: %w", err)
	}
	if doc == nil {
		return nil, fmt.Errorf("the prometheus configuration is empty")
	}
	jobs, _ := doc["scrape_configs"].([]any)
	seen := map[string]bool{}
	kept := make([]any, 0, len(jobs))
	for _, j := range jobs {
		job, ok := j.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("scrape_configs holds %T, want a mapping", j)
		}
		name, _ := job["job_name"].(string)
		addrs, ok := targets[name]
		if !ok {
			continue
		}
		seen[name] = true
		for _, k := range serviceDiscovery {
			delete(job, k)
		}
		job["static_configs"] = []any{map[string]any{"targets": addrs}}
		if interval > 0 {
			delete(job, "scrape_interval")
			delete(job, "scrape_timeout")
		}
		kept = append(kept, job)
	}
	var missing []string
	for name := range targets {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("the configuration has no job named %s", strings.Join(missing, ", "))
	}
	doc["scrape_configs"] = kept

	if files, ok := doc["rule_files"].([]any); ok {
		for i, f := range files {
			if s, ok := f.(string); ok && !filepath.IsAbs(s) {
				files[i] = filepath.Join(configDir, s)
			}
		}
	}
	if interval > 0 {
		global, _ := doc["global"].(map[string]any)
		if global == nil {
			global = map[string]any{}
		}
		d := promDuration(interval)
		global["scrape_interval"], global["evaluation_interval"], global["scrape_timeout"] = d, d, d
		doc["global"] = global
	}
	return yaml.Marshal(doc)
}

// promDuration writes d as Prometheus durations are written (whole milliseconds
// at least: "1s", "500ms").
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}
