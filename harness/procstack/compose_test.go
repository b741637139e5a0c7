package procstack

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testtool"
)

// The stack gives each process the environment docker-compose.yml gives
// the matching service, as `docker-compose config` resolves it with
// .env's optional settings left unset: the same variables, and the same
// values except the addresses, passwords and keys of composeDiffers. So a
// setting changed in one place and not the other fails here; and a file
// the compose tool refuses fails here too.
func TestComposeEnvironment(t *testing.T) {
	if _, err := exec.LookPath(ComposeTool); err != nil {
		testtool.Missing(t, fmt.Errorf("%s is not installed (make compose installs Debian's): %w", ComposeTool, err))
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	services, err := ComposeConfig(ctx, root, map[string]string{
		"POSTGRES_PASSWORD":    "compose-password",
		"TEMPORAL_DB_PASSWORD": "compose-temporal-password",
		"WEBHOOK_SECRET_KEY":   "Y29tcG9zZS1rZXktY29tcG9zZS1rZXktY29tcG9zZSE=",
	})
	if err != nil {
		t.Fatal(err)
	}
	service := func(name string) ComposeService {
		s, ok := services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no service %s", name)
		}
		return s
	}
	deploy := filepath.Join(root, "deploy")

	// What Start gives the api, the worker and admin migrate when it runs
	// Jaeger, as harness/cmd/stack has it do (it sets no other option that
	// changes it, except --cert-file).
	app := EnvMap(appEnv(appAddrs{
		DatabaseURL: appDatabaseURL(40001, "stack-password"),
		HTTP:        "127.0.0.1:40002", WorkerHTTP: "127.0.0.1:40003", Temporal: "127.0.0.1:40004",
		SecretKey: "c3RhY2sta2V5LXN0YWNrLWtleS1zdGFjay1rZXktc3RhY2s=",
		OTLP:      "127.0.0.1:40007",
	}, Options{Traces: true}))
	var problems []string
	for _, name := range []string{"api", "worker", "migrate"} {
		problems = append(problems, CompareEnv(name, service(name).Environment, app)...)
	}

	dynamicConfig := filepath.Join(deploy, "temporal", "dynamicconfig.yaml")
	ports := map[string]int{}
	for i, name := range temporalPorts {
		ports[name] = 20001 + i
	}
	temporal := service("temporal")
	problems = append(problems, CompareEnv("temporal", temporal.Environment, EnvMap(temporalServerEnv(temporalServer{
		PGPort: 40005, Password: "stack-temporal-password", DynamicConfig: dynamicConfig, Ports: ports,
		MetricsAddr: "127.0.0.1:40006",
	})))...)
	// The server reads the same dynamic configuration file.
	if got, want := temporal.Volumes[dynamicConfig], temporal.Environment["DYNAMIC_CONFIG_FILE_PATH"]; got != want {
		t.Errorf("compose mounts %s at %q, but the server reads DYNAMIC_CONFIG_FILE_PATH=%q", dynamicConfig, got, want)
	}

	// The schema is made by the same script, with the same variables.
	schema := service("temporal-schema")
	problems = append(problems, CompareEnv("temporal-schema", schema.Environment,
		EnvMap(schemaEnv(40005, "stack-temporal-password", "/usr/bin")))...)
	scripts := schema.Volumes[filepath.Join(deploy, "temporal")]
	if want := []string{"/bin/sh", scripts + "/setup-schema.sh"}; scripts == "" || !slices.Equal(schema.Entrypoint, want) {
		t.Errorf("temporal-schema runs %q with deploy/temporal at %q; the stack runs deploy/temporal/setup-schema.sh", schema.Entrypoint, scripts)
	}

	// Jaeger runs on the same file, with only its listeners (and a UI
	// build) set otherwise.
	jaeger := service("jaeger")
	listeners := map[string]string{}
	for i, name := range JaegerPorts {
		listeners[name] = fmt.Sprintf("127.0.0.1:%d", 40010+i)
	}
	problems = append(problems, CompareEnv("jaeger", jaeger.Environment, EnvMap(jaegerEnv(listeners, "/jaeger-ui/build")))...)
	conf := jaeger.Volumes[filepath.Join(deploy, "jaeger")]
	if want := []string{"--config", conf + "/config.yaml"}; conf == "" || !slices.Equal(jaeger.Command, want) {
		t.Errorf("jaeger runs %q with deploy/jaeger at %q; the stack runs it with --config deploy/jaeger/config.yaml", jaeger.Command, conf)
	}

	// The databases and users are compose's.
	for _, c := range []struct{ service, key, want string }{
		{"postgres", "POSTGRES_USER", appDBUser},
		{"postgres", "POSTGRES_DB", appDBName},
		{"temporal-postgres", "POSTGRES_USER", temporalDBUser},
	} {
		if got := service(c.service).Environment[c.key]; got != c.want {
			t.Errorf("compose's %s has %s=%q, the stack uses %q", c.service, c.key, got, c.want)
		}
	}
	// The databases start with the stack's settings.
	for _, c := range []struct {
		service string
		want    []string
	}{{"postgres", appPGSettings}, {"temporal-postgres", temporalPGSettings}} {
		var want []string
		for _, s := range c.want {
			want = append(want, "-c", s)
		}
		if got := service(c.service).Command; !slices.Equal(got, append([]string{"postgres"}, want...)) {
			t.Errorf("compose's %s runs %q, the stack starts it with %q", c.service, got, want)
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}
