package metrics_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// promqlWords are the words of PromQL that look like metric names: the
// operators and modifiers that are not functions (functions are followed
// by a parenthesis and are skipped anyway).
var promqlWords = map[string]bool{
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true,
	"ignoring": true, "group_left": true, "group_right": true, "bool": true, "offset": true,
	"inf": true, "nan": true,
}

var (
	stringLit  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	matchers   = regexp.MustCompile(`\{[^}]*\}`)
	ranges     = regexp.MustCompile(`\[[^\]]*\]`)
	numbers    = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b`)
	grouping   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
)

// alertExprs returns the expressions of an alerting-rules file.
func alertExprs(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Expr string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(src, &file); err != nil {
		return nil, err
	}
	var out []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Expr)
		}
	}
	return out, nil
}

// dashboardExprs returns the query of every panel of a Grafana dashboard,
// with Grafana's interval variables replaced by 1m so Prometheus can run
// them.
func dashboardExprs(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(src, &d); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			e := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m").Replace(t.Expr)
			out = append(out, e)
		}
	}
	return out, nil
}

// metricNames returns every metric name the expressions use. It reads
// PromQL lexically, which is enough for the plain shapes of our rules and
// panels: string literals, label matchers, ranges, grouping clauses and
// numbers are removed, and of the identifiers left, those followed by a
// parenthesis (functions) or that are PromQL's words are not metric names.
func metricNames(exprs []string) []string {
	names := map[string]bool{}
	for _, e := range exprs {
		e = stringLit.ReplaceAllString(e, `""`)
		e = matchers.ReplaceAllString(e, " ")
		e = ranges.ReplaceAllString(e, " ")
		e = grouping.ReplaceAllString(e, " ")
		e = numbers.ReplaceAllString(e, " ")
		for _, m := range identifier.FindAllStringSubmatch(e, -1) {
			word := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), "("))
			if m[1] != "" || promqlWords[strings.ToLower(word)] {
				continue
			}
			names[word] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// The reader finds the metric names, and only them, in the shapes the
// rules use.
func TestAlertMetricNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "alerts.yml")
	rules := `groups:
  - name: g
    rules:
      - alert: A
        expr: |
          sum by (le, task_queue) (rate(a_bucket{job="worker", x=~"by (y)"}[5m])) / ignoring(z) b_total > 1e-9
          and on (job) (absent(c_gauge{q="r"}) or up == 0)
`
	if err := os.WriteFile(path, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	exprs, err := alertExprs(path)
	if err != nil {
		t.Fatal(err)
	}
	got := metricNames(exprs)
	if want := []string{"a_bucket", "b_total", "c_gauge", "up"}; !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
}
