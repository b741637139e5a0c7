package worker

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// KeepSearchAttributes registers the workflows' search attributes, retrying
// until it succeeds or ctx ends. Run it beside the worker, not before:
// workflows work without them, only not findable by them in the Web UI. On
// Temporal Cloud an operator creates them (docs/operations.md).
func KeepSearchAttributes(ctx context.Context, c client.Client, namespace string, log *slog.Logger) {
	keepTrying(ctx, log, "search attributes", func(ctx context.Context) error {
		return searchattr.Ensure(ctx, c, namespace)
	}, slog.String("namespace", namespace))
}
