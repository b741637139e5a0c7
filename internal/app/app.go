// Package app assembles the service's processes from their parts, so that
// cmd/api, cmd/worker and the single-binary cmd/dev (and the end-to-end
// tests) run exactly the same wiring.
package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/openlayer-ai/workspace-service/internal/config"
)

// NewLogger is the JSON logger every process writes to stderr.
func NewLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// TemporalClient connects lazily, so a process starts (and reports itself
// not ready) while Temporal is still coming up.
func TemporalClient(cfg config.Config, log *slog.Logger) (client.Client, error) {
	return client.NewLazyClient(client.Options{
		HostPort:  cfg.TemporalAddress,
		Namespace: cfg.TemporalNamespace,
		Logger:    tlog.NewStructuredLogger(log.With(slog.String("component", "temporal-sdk"))),
	})
}

// Serve runs an HTTP server on ln until ctx ends, then shuts it down
// gracefully within timeout. Timeouts bound slow or idle clients.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, timeout time.Duration) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
