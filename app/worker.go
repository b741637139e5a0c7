package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// WorkerProcess is a ready-to-run worker process: the Temporal worker plus
// an HTTP listener for /metrics, /healthz and /readyz.
type WorkerProcess struct {
	resources
	cfg        config.Config
	log        *slog.Logger
	activities *activities.Activities
	registry   *prometheus.Registry
	// outbox wakes the relays when an attempt stores an operational event.
	outbox *store.Notifier
}

// NewWorker opens the database and Temporal client and binds the metrics
// address. Its one registry holds the worker's series and Temporal's.
func NewWorker(cfg config.Config, log *slog.Logger) (*WorkerProcess, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	res, err := open(cfg, log, cfg.WorkerHTTPAddr, reg)
	if err != nil {
		return nil, err
	}
	acts := &activities.Activities{Store: res.store, Log: log}
	acts.LocalShare, acts.RegularShare = worker.AttemptShares()
	// Recovery signals the events' delivery workflows through this client.
	acts.Redeliver = func(ctx context.Context, ev models.Event, subID uuid.UUID, requestID string, attempt int) error {
		return workflows.SignalRedeliver(ctx, res.temporal, ev, cfg.TaskQueue,
			workflows.Redelivery{SubscriptionID: subID, RequestID: requestID, Attempt: attempt}, workflows.PriorityRecovery)
	}
	notifier := wireWebhooks(cfg, log, reg, acts)
	return &WorkerProcess{resources: res, cfg: cfg, log: log, activities: acts, registry: reg, outbox: notifier}, nil
}

// Run works until ctx ends or the Temporal worker fails.
func (p *WorkerProcess) Run(ctx context.Context) error {
	defer p.close()
	g, ctx := errgroup.WithContext(ctx)
	serveDebug(ctx, p.cfg.DebugAddr, p.log)
	g.Go(func() error {
		return worker.Run(ctx, p.temporal, worker.Options{
			TaskQueue: p.cfg.TaskQueue, StopTimeout: p.cfg.ShutdownTimeout, Log: p.log,
		}, p.activities)
	})
	g.Go(func() error { return Serve(ctx, p.listener, p.httpHandler(), p.cfg.ShutdownTimeout) })
	// Beside the worker, not before it: a Temporal away at start delays
	// the registration, never the worker (see KeepSearchAttributes).
	g.Go(func() error { worker.KeepSearchAttributes(ctx, p.temporal, p.cfg.TemporalNamespace, p.log); return nil })
	g.Go(func() error { p.runWebhooks(ctx); return nil })
	return g.Wait()
}

func (p *WorkerProcess) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(p.registry, promhttp.HandlerOpts{Registry: p.registry}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := p.store.Ping(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"ready":false,"checks":{"postgres":"unreachable"}}`))
			return
		}
		if _, err := p.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"ready":false,"checks":{"temporal":"unreachable"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"ready":true}`))
	})
	return instrumentWorkerHTTP(p.registry, mux)
}
