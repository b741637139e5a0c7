package metrics_test

import (
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

// alertMetricNames returns every metric name the expressions of an
// alerting-rules file use. It reads PromQL lexically, which is enough for
// the rules' plain shapes: string literals, label matchers, ranges and
// grouping clauses and numbers are removed, and of the identifiers left, those that
// are followed by a parenthesis (functions) or are PromQL's words are not
// metric names.
func alertMetricNames(path string) ([]string, error) {
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
	names := map[string]bool{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			e := stringLit.ReplaceAllString(r.Expr, `""`)
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
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
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
	got, err := alertMetricNames(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a_bucket", "b_total", "c_gauge", "up"}; !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
}
