// Command worker runs the Temporal worker that executes the service's
// workflows and activities, with /metrics, /healthz and /readyz on its own
// address. Configuration comes from the environment (see README).
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
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	log := app.NewLogger(cfg.LogLevel)
	stopTracing, err := app.Tracing(ctx, "workspace-worker", cfg.ShutdownTimeout)
	if err != nil {
		return err
	}
	defer stopTracing()
	p, err := app.NewWorker(cfg, log)
	if err != nil {
		return err
	}
	log.Info("worker started", slog.String("metricsAddr", p.Addr()), slog.Any("config", cfg))
	return p.Run(ctx)
}
