package procstack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/freeport"
)

// JaegerPackage is Jaeger v2's command: an OpenTelemetry collector with
// Jaeger's storage, query API and web UI, compose's jaeger service.
const JaegerPackage = "github.com/jaegertracing/jaeger/cmd/jaeger"

// jaegerModule is the folder, below the module root, of the module that
// pins Jaeger's version (the image tag compose runs). It is a module of
// its own so that the service's go.mod and go.sum do not carry the
// collector's several hundred dependencies.
const jaegerModule = "harness/tools/jaeger"

// BuildJaeger builds Jaeger's command into dir/jaeger at the version
// harness/tools/jaeger/go.mod pins. The first build compiles the
// collector (minutes on two cores); later ones are incremental. A Jaeger
// built from its Go module serves a placeholder page instead of the web
// UI (the UI's assets are not in the module: its release build embeds
// them), and everything else: the OTLP receiver, the storage and the
// query API. Options.TracesUI gives it a jaeger-ui build to serve.
func BuildJaeger(ctx context.Context, dir string) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	out, err := filepath.Abs(filepath.Join(dir, "jaeger"))
	if err != nil {
		return err
	}
	return goBuildIn(ctx, filepath.Join(root, jaegerModule), out, JaegerPackage)
}

// JaegerPorts are the variables of deploy/jaeger/config.yaml that set its
// listen addresses: compose's defaults in a container, loopback ports here.
var JaegerPorts = []string{"JAEGER_OTLP_GRPC", "JAEGER_OTLP_HTTP", "JAEGER_QUERY_HTTP", "JAEGER_QUERY_GRPC"}

// jaegerEnv is the environment of the stack's Jaeger: each listener on
// its loopback address, and the UI's assets (empty: the binary's own).
func jaegerEnv(addrs map[string]string, uiAssets string) []string {
	env := map[string]string{}
	for _, name := range JaegerPorts {
		env[name] = addrs[name]
	}
	if uiAssets != "" {
		env["JAEGER_UI_ASSETS"] = uiAssets
	}
	return envList(env)
}

// JaegerOptions configure StartJaeger.
type JaegerOptions struct {
	Bin    string // the folder BuildJaeger built into
	Dir    string // where jaeger.log goes
	Deploy string // the repository's deploy folder
	// UI is a jaeger-ui build to serve (empty: the binary's own page).
	UI string
	// Addrs are the listeners, by JaegerPorts variable (JAEGER_OTLP_GRPC,
	// …); nil: free loopback ports, tried again on new ones when one is
	// taken before Jaeger binds it.
	Addrs map[string]string
}

// Jaeger is a running Jaeger.
type Jaeger struct {
	*Proc
	Addr string // its UI and query API, host:port
	OTLP string // its OTLP gRPC receiver, host:port
}

// StartJaeger runs Jaeger on deploy/jaeger/config.yaml and waits until
// its query API answers. Stop it with Terminate.
func StartJaeger(ctx context.Context, o JaegerOptions) (*Jaeger, error) {
	config := filepath.Join(o.Deploy, "jaeger", "config.yaml")
	for try := 1; ; try++ {
		addrs := o.Addrs
		if addrs == nil {
			addrs = map[string]string{}
			for _, name := range JaegerPorts {
				p, err := freeport.Loopback()
				if err != nil {
					return nil, err
				}
				addrs[name] = hostPort(p)
			}
		}
		j := &Jaeger{Addr: addrs["JAEGER_QUERY_HTTP"], OTLP: addrs["JAEGER_OTLP_GRPC"]}
		j.Proc = &Proc{
			Name: "jaeger", Bin: filepath.Join(o.Bin, "jaeger"), Args: []string{"--config", config},
			Env: jaegerEnv(addrs, o.UI), LogPath: filepath.Join(o.Dir, "jaeger.log"),
			ReadyCheck: func(ctx context.Context) error { return GetOK(ctx, "http://"+j.Addr+"/api/services") },
		}
		err := j.Start(ctx, time.Minute)
		if err == nil {
			return j, nil
		}
		exited := j.PID() == 0
		_ = j.Kill()
		if o.Addrs != nil || !exited || try == 3 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// startJaeger runs the stack's Jaeger (Options.Traces).
func (s *Stack) startJaeger(ctx context.Context, o Options) error {
	j, err := StartJaeger(ctx, JaegerOptions{Bin: o.Bin, Dir: s.Dir, Deploy: o.Deploy, UI: o.TracesUI})
	if err != nil {
		return err
	}
	s.Jaeger, s.JaegerAddr, s.JaegerUI, s.OTLPAddr = j.Proc, j.Addr, o.TracesUI != "", j.OTLP
	return nil
}

// GetOK is nil when GET url answers 200: a process's readiness.
func GetOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// TracesUIAssets checks that dir is a jaeger-ui build (its index.html at
// the top) and returns it as an absolute path.
func TracesUIAssets(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, "index.html")); err != nil {
		return "", fmt.Errorf("%s is not a jaeger-ui build (packages/jaeger-ui/build of jaeger-ui's assets.tar.gz): %w", dir, err)
	}
	return abs, nil
}
