package config

import (
	"bufio"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// variables lists every environment variable Parse reads, by recording
// what it looks up.
func variables() []string {
	var names []string
	_, _ = Parse(func(k string) (string, bool) {
		names = append(names, k)
		return "", false
	})
	sort.Strings(names)
	return names
}

// The compose file hands our processes exactly the variables the
// configuration reads: none missing, none misspelt. Its OTEL_* are the
// OpenTelemetry SDK's (internal/tracing), which Parse does not read.
func TestComposeEnvironmentMatchesConfig(t *testing.T) {
	f, err := os.Open("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile(`^  ([A-Z][A-Z0-9_]*):`)
	var got []string
	in := false
	for s := bufio.NewScanner(f); s.Scan(); {
		line := s.Text()
		switch {
		case strings.HasPrefix(line, "x-app-env:"):
			in = true
		case in && (line == "" || !strings.HasPrefix(line, " ")):
			in = false
		case in:
			if m := entry.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], "OTEL_") {
				got = append(got, m[1])
			}
		}
	}
	sort.Strings(got)
	if want := variables(); !reflect.DeepEqual(got, want) {
		t.Errorf("docker-compose.yml x-app-env sets\n %v\nconfig reads\n %v", got, want)
	}
}

// The documented defaults in deploy/env.example are values Parse accepts.
func TestEnvExampleParses(t *testing.T) {
	b, err := os.ReadFile("../../deploy/env.example")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && v != "" {
			env[k] = v
		}
	}
	if len(env) < 5 {
		t.Fatalf("read only %v from env.example", env)
	}
	if _, err := Parse(lookup(env)); err != nil {
		t.Errorf("env.example defaults do not parse: %v", err)
	}
}
