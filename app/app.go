// Package app assembles the service's processes from their parts, so that
// cmd/api, cmd/worker, harness/cmd/dev and the end-to-end tests share one wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// NewLogger is the JSON logger every process writes to stderr: durations
// as Go writes them ("2160h0m0s", not nanoseconds), and the trace_id and
// span_id of the span a line is logged under (tracing.LogHandler).
func NewLogger(level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: durationText}
	return slog.New(tracing.LogHandler(slog.NewJSONHandler(os.Stderr, opts)))
}

func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// Tracing installs the process's tracer provider (tracing.Setup) and
// returns its shutdown, which flushes the last spans within timeout.
func Tracing(ctx context.Context, service string, timeout time.Duration) (func(), error) {
	shutdown, err := tracing.Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = shutdown(ctx)
	}, nil
}

// TemporalClient connects lazily, so a process starts (not ready) while
// Temporal comes up. Its metrics go to reg; close the closer after the client.
func TemporalClient(cfg config.Config, log *slog.Logger, reg prometheus.Registerer) (client.Client, io.Closer, error) {
	metrics, closer := temporalMetrics(reg, log)
	// Workflows, activities, signals and starts join the caller's trace;
	// workers made from this client inherit the interceptor. With tracing
	// off its spans are the no-op provider's.
	traced, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer: tracing.Tracer(), TextMapPropagator: tracing.Propagator,
	})
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	c, err := client.NewLazyClient(client.Options{
		HostPort:       cfg.TemporalAddress,
		Namespace:      cfg.TemporalNamespace,
		Logger:         tlog.NewStructuredLogger(log.With(slog.String("component", "temporal-sdk"))),
		MetricsHandler: metrics,
		Interceptors:   []interceptor.ClientInterceptor{traced},
		// Requests go uncompressed: they are small (an event is at most
		// its size limit, a workflow task's commands less), and gzip cost
		// both this process and Temporal's server CPU on every call (the
		// SDK's default; 1–3% of the worker's profile at saturation).
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}},
		// No worker heartbeats: where the server enables worker commands,
		// they poll a task queue named per client instance and label metrics
		// with it, new series on every start, for features this service never uses.
		WorkerHeartbeatInterval: -1,
	})
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	return c, closer, nil
}

// resources are what every process holds open.
type resources struct {
	store           *store.Store
	temporal        client.Client
	temporalMetrics io.Closer
	listener        net.Listener
}

// open acquires a process's resources, releasing them if a later step fails.
func open(cfg config.Config, log *slog.Logger, addr string, reg prometheus.Registerer) (resources, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return resources{}, err
	}
	db, err := store.Open(cfg.DatabaseURL, cfg.DatabaseMaxConns)
	if err != nil {
		return resources{}, err
	}
	tc, tm, err := TemporalClient(cfg, log, reg)
	if err != nil {
		db.Close()
		return resources{}, fmt.Errorf("temporal client: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tc.Close()
		tm.Close()
		db.Close()
		return resources{}, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return resources{store: store.New(db), temporal: tc, temporalMetrics: tm, listener: ln}, nil
}

// Addr is the bound listen address.
func (r resources) Addr() string { return r.listener.Addr().String() }

// close releases all but the listener, which the HTTP server owning it closes.
func (r resources) close() {
	r.temporal.Close()
	r.temporalMetrics.Close()
	r.store.DB().Close()
}

// Serve runs an HTTP server on ln until ctx ends, then shuts it down within timeout.
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
