package procstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ComposeTool is the compose implementation that validates
// docker-compose.yml without an engine: Debian's docker-compose (1.29),
// which the Makefile installs.
const ComposeTool = "docker-compose"

// ComposeService is what `docker-compose config` resolves for a service.
type ComposeService struct {
	Environment map[string]string `yaml:"environment"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Command     []string          `yaml:"command"`
	// Volumes are bind mounts as source → target (named volumes have a
	// name for source).
	Volumes map[string]string `yaml:"-"`
}

// ComposeConfig runs `docker-compose config` on the repository's
// docker-compose.yml with only env set (no .env file, nothing from this
// process's environment), so a file the tool refuses fails here, and
// returns every service as the tool resolved it.
func ComposeConfig(ctx context.Context, root string, env map[string]string) (map[string]ComposeService, error) {
	bin, err := exec.LookPath(ComposeTool)
	if err != nil {
		return nil, fmt.Errorf("%s is not installed (the Makefile's compose target installs Debian's): %w", ComposeTool, err)
	}
	empty := filepath.Join(os.TempDir(), "procstack-empty.env")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "--env-file", empty, "--project-directory", root,
		"-f", filepath.Join(root, "docker-compose.yml"), "config")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s config: %w\n%s", ComposeTool, err, stderr.String())
	}
	var doc struct {
		Services map[string]struct {
			ComposeService `yaml:",inline"`
			Volumes        []yaml.Node `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("read %s config's output: %w", ComposeTool, err)
	}
	services := map[string]ComposeService{}
	for name, s := range doc.Services {
		svc := s.ComposeService
		svc.Volumes = map[string]string{}
		for _, v := range s.Volumes {
			src, dst, err := volume(v)
			if err != nil {
				return nil, fmt.Errorf("service %s: %w", name, err)
			}
			svc.Volumes[src] = dst
		}
		services[name] = svc
	}
	return services, nil
}

// volume reads a volume in the short syntax (src:dst[:mode], what 1.29
// prints) or the long one (what Compose v2 prints).
func volume(n yaml.Node) (src, dst string, err error) {
	switch n.Kind {
	case yaml.ScalarNode:
		parts := strings.Split(n.Value, ":")
		if len(parts) < 2 {
			return "", "", fmt.Errorf("volume %q: want source:target", n.Value)
		}
		return parts[0], parts[1], nil
	case yaml.MappingNode:
		var long struct{ Source, Target string }
		if err := n.Decode(&long); err != nil {
			return "", "", err
		}
		return long.Source, long.Target, nil
	}
	return "", "", errors.New("volume: neither a string nor a mapping")
}

// composeDiffers lists every variable whose value the stack sets
// otherwise than compose, and why; each keeps the part of the value that
// must still be equal (nil: none). Every variable not listed must have the
// same value in both.
var composeDiffers = map[string]struct {
	why  string
	keep func(string) string
}{
	// One machine runs what compose spreads over containers: every
	// listener and every address of another process is a loopback port.
	"HTTP_ADDR":           {"address: the API's own loopback port", nil},
	"WORKER_HTTP_ADDR":    {"address: the worker's own loopback port", nil},
	"TEMPORAL_ADDRESS":    {"address: the Temporal frontend's loopback port", nil},
	"BIND_ON_IP":          {"address: loopback instead of every interface of a container", nil},
	"POSTGRES_SEEDS":      {"address: Temporal's cluster on loopback", nil},
	"DB_PORT":             {"address: Temporal's cluster's port", nil},
	"SQL_HOST":            {"address: Temporal's cluster on loopback", nil},
	"SQL_PORT":            {"address: Temporal's cluster's port", nil},
	"PROMETHEUS_ENDPOINT": {"address: the server's metrics on a loopback port", nil},
	// The same file, mounted at another path in the container (the
	// compose test checks the mount's source is the stack's file).
	"DYNAMIC_CONFIG_FILE_PATH": {"path: the repository's file instead of its mount point", nil},

	// Jaeger's OTLP receiver on loopback, over plain gRPC (http://) as in compose.
	"OTEL_EXPORTER_OTLP_ENDPOINT": {"address: Jaeger's OTLP receiver on loopback", scheme},

	// Each deployment makes its own secrets.
	"POSTGRES_PWD":       {"password: generated per run", nil},
	"SQL_PASSWORD":       {"password: generated per run", nil},
	"WEBHOOK_SECRET_KEY": {"key: generated per run", nil},
	// Scheme, user, database and options stay those of compose.
	"DATABASE_URL": {"address and password", urlWithoutHostAndPassword},
	// A loopback stack's webhook receivers are on loopback.
	"WEBHOOK_ALLOW_PRIVATE_NETWORKS": {"receivers on loopback", nil},
}

// stackOnly lists the variables the stack adds to what compose sets.
var stackOnly = map[string]string{
	// Compose runs Temporal's services on their default ports in one
	// container; on a shared loopback each gets a free port.
	"FRONTEND_GRPC_PORT": "port", "FRONTEND_HTTP_PORT": "port", "FRONTEND_MEMBERSHIP_PORT": "port",
	"HISTORY_GRPC_PORT": "port", "HISTORY_MEMBERSHIP_PORT": "port",
	"MATCHING_GRPC_PORT": "port", "MATCHING_MEMBERSHIP_PORT": "port",
	"WORKER_GRPC_PORT": "port", "WORKER_MEMBERSHIP_PORT": "port",
	// The admin-tools image has temporal-sql-tool on its PATH; the stack
	// puts the one it built first.
	"PATH": "where temporal-sql-tool is",
	// The CA of a test's webhook receiver, when one is given.
	"SSL_CERT_FILE": "receiver CA",
	// Jaeger's listeners: compose's are the config file's defaults in
	// its container, the stack's free loopback ports; and a jaeger-ui
	// build for a binary built from the Go module (Options.TracesUI).
	"JAEGER_OTLP_GRPC": "address", "JAEGER_OTLP_HTTP": "address",
	"JAEGER_QUERY_HTTP": "address", "JAEGER_QUERY_GRPC": "address",
	"JAEGER_UI_ASSETS": "UI assets",
}

// CompareEnv reports how a stack process's environment differs from the
// compose service's beyond composeDiffers and stackOnly: a variable one
// sets and the other does not, or a value that must be equal and is not.
func CompareEnv(service string, compose, stack map[string]string) []string {
	var problems []string
	keys := map[string]string{}
	maps.Copy(keys, compose)
	maps.Copy(keys, stack)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		c, inCompose := compose[k]
		s, inStack := stack[k]
		switch {
		case !inCompose && stackOnly[k] != "":
		case !inCompose:
			problems = append(problems, fmt.Sprintf("%s: the stack sets %s, compose does not", service, k))
		case !inStack:
			problems = append(problems, fmt.Sprintf("%s: compose sets %s, the stack does not", service, k))
		default:
			d, differs := composeDiffers[k]
			switch {
			case !differs && c != s:
				problems = append(problems, fmt.Sprintf("%s: %s is %q in compose, %q in the stack", service, k, c, s))
			case differs && d.keep != nil && d.keep(c) != d.keep(s):
				problems = append(problems, fmt.Sprintf("%s: %s differs beyond its %s: %q in compose, %q in the stack",
					service, k, d.why, d.keep(c), d.keep(s)))
			}
		}
	}
	return problems
}

// scheme keeps a URL's scheme (http: the OTLP exporter's insecure gRPC).
func scheme(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "unparsable: " + s
	}
	return u.Scheme
}

// urlWithoutHostAndPassword keeps a URL's scheme, user, path and query.
func urlWithoutHostAndPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "unparsable: " + s
	}
	u.Host = ""
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// EnvMap turns KEY=value lines into a map (the last of a key wins, as
// for exec).
func EnvMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
