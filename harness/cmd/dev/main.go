// Command dev runs the whole service on one machine for trying it out:
// an embedded Temporal server with its Web UI, PostgreSQL (DATABASE_URL, or a
// cluster it creates under the data folder), the migrations, the API and the
// worker. On first start it bootstraps a workspace and an admin key and
// writes them to <data-dir>/credentials.json; later starts reuse the data.
// With --traces it also builds and runs Jaeger, as make stack does, and
// sends the process's traces to it.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(ctx, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

type options struct {
	dataDir      string
	httpAddr     string
	workerAddr   string
	temporalPort int
	uiPort       int
	pgPort       int
	portOffset   int  // what parseFlags applied to the ports nobody chose
	autoOffset   bool // parseFlags chose it: the defaults were taken
	// traces runs Jaeger on jaegerPorts (by JAEGER_* variable).
	traces      bool
	jaegerPorts map[string]*int
}

// parseFlags reads flags whose defaults come from the environment, so both
// `dev --http-addr ...` and `HTTP_ADDR=... dev` work. The ports nobody
// chose move by --port-offset, or, without it, by the smallest multiple of
// 10 at which all of them are free, so a second make dev beside a first
// starts without five flags. Its data moves to .data-<offset> only while a
// make dev's PostgreSQL runs on .data, so a lone make dev that found some
// other program on a default port keeps its workspace and key.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.StringVar(&o.dataDir, "data-dir", env("DEV_DATA_DIR", ".data"), "folder for all local state (env DEV_DATA_DIR)")
	fs.StringVar(&o.httpAddr, "http-addr", env("HTTP_ADDR", "127.0.0.1:8080"), "API listen address (env HTTP_ADDR)")
	fs.StringVar(&o.workerAddr, "worker-addr", env("WORKER_HTTP_ADDR", "127.0.0.1:9090"), "worker metrics/health address (env WORKER_HTTP_ADDR)")
	fs.IntVar(&o.temporalPort, "temporal-port", envInt("DEV_TEMPORAL_PORT", 7233), "Temporal frontend gRPC port (env DEV_TEMPORAL_PORT)")
	fs.IntVar(&o.uiPort, "ui-port", envInt("DEV_UI_PORT", 8233), "Temporal Web UI port (env DEV_UI_PORT)")
	fs.IntVar(&o.pgPort, "pg-port", envInt("DEV_PG_PORT", 55432), "port of the local PostgreSQL when DATABASE_URL is unset (env DEV_PG_PORT)")
	fs.IntVar(&o.portOffset, "port-offset", envInt("DEV_PORT_OFFSET", -1), "add this to every port not set by its own flag or variable; unset: the smallest multiple of 10 at which they are all free (env DEV_PORT_OFFSET)")
	fs.BoolVar(&o.traces, "traces", os.Getenv("DEV_TRACES") == "true", "build and run Jaeger (its UI on port 16686, OTLP on 4317, moved by the offset) and send the traces to it (env DEV_TRACES=true)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	chosen := func(flagName, envName string) bool { return set[flagName] || os.Getenv(envName) != "" }
	httpHost, httpPort, err := hostPort(o.httpAddr)
	if err != nil {
		return o, fmt.Errorf("--http-addr: %w", err)
	}
	workerHost, workerPort, err := hostPort(o.workerAddr)
	if err != nil {
		return o, fmt.Errorf("--worker-addr: %w", err)
	}
	ports := []devPort{
		{"http", &httpPort, chosen("http-addr", "HTTP_ADDR")},
		{"worker", &workerPort, chosen("worker-addr", "WORKER_HTTP_ADDR")},
		{"temporal", &o.temporalPort, chosen("temporal-port", "DEV_TEMPORAL_PORT")},
		{"ui", &o.uiPort, chosen("ui-port", "DEV_UI_PORT")},
		// A DATABASE_URL makes the local cluster's port moot.
		{"pg", &o.pgPort, chosen("pg-port", "DEV_PG_PORT") || os.Getenv("DATABASE_URL") != ""},
	}
	if o.traces {
		// deploy/jaeger/config.yaml's ports, the container's defaults.
		o.jaegerPorts = map[string]*int{}
		for name, port := range map[string]int{
			"JAEGER_OTLP_GRPC": 4317, "JAEGER_OTLP_HTTP": 4318, "JAEGER_QUERY_HTTP": 16686, "JAEGER_QUERY_GRPC": 16685,
		} {
			o.jaegerPorts[name] = &port
			ports = append(ports, devPort{name, &port, false})
		}
	}
	o.autoOffset = o.portOffset < 0
	if o.portOffset, err = applyOffset(ports, o.portOffset, loopbackFree); err != nil {
		return o, err
	}
	o.httpAddr = net.JoinHostPort(httpHost, strconv.Itoa(httpPort))
	o.workerAddr = net.JoinHostPort(workerHost, strconv.Itoa(workerPort))
	if o.portOffset > 0 && !chosen("data-dir", "DEV_DATA_DIR") && dataInUse(o.dataDir) {
		// The first instance's PostgreSQL holds .data; its workspace is its own.
		o.dataDir += "-" + strconv.Itoa(o.portOffset)
	}
	return o, nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
