package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/keysync"
)

// runKeySync reconciles API keys' lifecycle workflows until ctx ends: every
// couple of seconds it notifies the workflows of key changes the API could
// not (see keysync). It never stops the worker; while Temporal is
// away each round fails, is logged and the next one tries again.
func (p *WorkerProcess) runKeySync(ctx context.Context) {
	synced := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "api_key_lifecycle_reconciled_total",
		Help: "API key changes the worker's reconciler delivered to their workflows (the API could not).",
	})
	p.registry.MustRegister(synced)
	n := keysync.Notifier{Temporal: p.temporal, Store: p.store, TaskQueue: p.cfg.TaskQueue, Log: p.log}
	n.Run(ctx, keysync.SweepInterval, keysync.SweepMinAge, func(count int) { synced.Add(float64(count)) })
}
