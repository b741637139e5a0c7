// Command api serves the HTTP API under /v1, with /healthz, /readyz and
// /metrics. Configuration comes from the environment (see README).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/openlayer-ai/workspace-service/app"
	"github.com/openlayer-ai/workspace-service/internal/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg.LogLevel)
	stopTracing, err := app.Tracing(ctx, "workspace-api", cfg.ShutdownTimeout)
	if err != nil {
		return err
	}
	defer stopTracing()
	p, err := app.NewAPI(cfg, log)
	if err != nil {
		return err
	}
	log.Info("api listening", slog.String("addr", p.Addr()), slog.Any("config", cfg))
	return p.Run(ctx)
}
