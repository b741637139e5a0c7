package worker

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// KeepSearchAttributes registers the workflows' search attributes in the
// namespace (searchattr.Ensure), retrying until it succeeds or ctx ends.
// It runs beside the worker, never before it: a worker that starts while
// Temporal is away comes up (healthy, sweeping its outboxes) and registers
// them once Temporal answers. Until the namespace has them, deliveries
// and key workflows start without them (workflows.StartDelivery,
// workflows.SignalWithStartAPIKey, whose callers log each such start) and
// work as any other, only not findable by them in the Web UI. Where the worker may not call
// the operator service (Temporal Cloud) this logs a warning every minute
// until an operator creates them (docs/operations.md).
func KeepSearchAttributes(ctx context.Context, c client.Client, namespace string, log *slog.Logger) {
	keepTrying(ctx, log, "search attributes", func(ctx context.Context) error {
		return searchattr.Ensure(ctx, c, namespace)
	}, slog.String("namespace", namespace))
}
