// Command dev runs the whole service on one machine for trying it out:
// an embedded Temporal server with its Web UI, PostgreSQL (DATABASE_URL, or a
// cluster it creates under the data folder), the migrations, the API and the
// worker. On first start it bootstraps a workspace and an admin key and
// writes them to <data-dir>/credentials.json; later starts reuse the data.
package main

import (
	"context"
	"flag"
	"fmt"
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
}

// parseFlags reads flags whose defaults come from the environment, so both
// `dev --http-addr ...` and `HTTP_ADDR=... dev` work.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.StringVar(&o.dataDir, "data-dir", env("DEV_DATA_DIR", ".data"), "folder for all local state (env DEV_DATA_DIR)")
	fs.StringVar(&o.httpAddr, "http-addr", env("HTTP_ADDR", "127.0.0.1:8080"), "API listen address (env HTTP_ADDR)")
	fs.StringVar(&o.workerAddr, "worker-addr", env("WORKER_HTTP_ADDR", "127.0.0.1:9090"), "worker metrics/health address (env WORKER_HTTP_ADDR)")
	fs.IntVar(&o.temporalPort, "temporal-port", envInt("DEV_TEMPORAL_PORT", 7233), "Temporal frontend gRPC port (env DEV_TEMPORAL_PORT)")
	fs.IntVar(&o.uiPort, "ui-port", envInt("DEV_UI_PORT", 8233), "Temporal Web UI port (env DEV_UI_PORT)")
	fs.IntVar(&o.pgPort, "pg-port", envInt("DEV_PG_PORT", 55432), "port of the local PostgreSQL when DATABASE_URL is unset (env DEV_PG_PORT)")
	return o, fs.Parse(args)
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
