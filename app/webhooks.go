package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/outbox"
	"github.com/openlayer-ai/workspace-service/worker"
)

// wireWebhooks gives the activities what webhook delivery needs, and returns
// the notifier that wakes the outbox relays after an attempt stores an
// operational event, for runWebhooks to run.
func wireWebhooks(cfg config.Config, log *slog.Logger, reg prometheus.Registerer, a *activities.Activities) *store.Notifier {
	a.Metrics = activities.NewMetrics(reg)
	a.WebhookDisable = store.DisablePolicy{After: cfg.WebhookDisableAfter, MinSpan: cfg.WebhookDisableMinSpan}
	notifier := store.NewNotifier(a.Store.DB(), log)
	a.Outbox = notifier
	reg.MustRegister(outbox.NewBacklogCollector(a.Store, log))
	a.WebhookClient = activities.NewWebhookClient(cfg.WebhookAllowPrivateNetworks)
	a.MaxInFlight = cfg.WebhookMaxInFlight
	box, err := secret.NewBox(cfg.WebhookSecretKeys...)
	switch {
	case errors.Is(err, secret.ErrNoKey):
		log.Warn("WEBHOOK_SECRET_KEY is not set: webhook deliveries wait (retrying) until a worker has the key")
	case err != nil:
		log.Error("WEBHOOK_SECRET_KEY is unusable: webhook deliveries wait until it is fixed", slog.Any("error", err))
	default:
		a.WebhookSecrets = box
	}
	if cfg.ShutdownTimeout < activities.MaxAttemptDuration {
		log.Warn("SHUTDOWN_TIMEOUT is shorter than a delivery attempt can take: a stopping worker may cut attempts short, and another worker will send them again",
			slog.Duration("shutdownTimeout", cfg.ShutdownTimeout), slog.Duration("maxAttempt", activities.MaxAttemptDuration))
	}
	if cfg.WebhookAllowPrivateNetworks {
		log.Warn("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: deliveries may reach loopback and private addresses; never set it in production")
	}
	return notifier
}

// runWebhooks keeps the retention schedule and runs the outbox relays until
// ctx ends. None ever stops the worker: each retries on its own.
func (p *WorkerProcess) runWebhooks(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { p.outbox.Run(ctx) })
	wg.Go(func() {
		worker.KeepRetentionSchedule(ctx, p.temporal, p.cfg.TaskQueue, p.cfg.DeliveryRetention, p.log)
	})
	wakes := outbox.Listen(ctx, p.store.DB())
	m := relayMetrics{sent: outbox.NewSentCounter(p.registry), failed: outbox.NewSendFailuresCounter(p.registry)}
	deps := outbox.Deps{Temporal: p.temporal, Store: p.store, TaskQueue: p.cfg.TaskQueue, Log: p.log}
	events := outbox.NewEvents(deps, p.cfg.WebhookRetrySchedule)
	keys, secrets := outbox.APIKeys{Deps: deps}, outbox.WebhookSecrets{Deps: deps}
	starts := relay(events, p.log, m)
	if p.cfg.OutboxStartTarget > 0 {
		starts.Limiter = outbox.NewStartLimiter(p.cfg.OutboxStartTarget)
		outbox.RegisterStartLimit(p.registry, starts.Limiter)
	}
	wg.Go(func() { starts.Run(ctx, outbox.SweepInterval, wakes[events.Name()]) })
	wg.Go(func() { relay(keys, p.log, m).Run(ctx, outbox.SweepInterval, wakes[keys.Name()]) })
	relay(secrets, p.log, m).Run(ctx, outbox.SweepInterval, wakes[secrets.Name()])
	wg.Wait()
}

// relayMetrics are the outbox relays' counters, by outbox.
type relayMetrics struct{ sent, failed *prometheus.CounterVec }

// relay is q's relay, counting into m.
func relay[T any](q outbox.Queue[T], log *slog.Logger, m relayMetrics) outbox.Relay[T] {
	return outbox.Relay[T]{
		Queue:    q,
		Log:      log,
		OnSent:   func(n int) { m.sent.WithLabelValues(q.Name()).Add(float64(n)) },
		OnFailed: m.failed.WithLabelValues(q.Name()).Inc,
	}
}
