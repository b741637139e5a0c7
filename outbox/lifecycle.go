package outbox

import (
	"context"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// change is a pending change of a lifecycle outbox (API keys, signing secrets).
type change interface{ Change() store.LifecycleChange }

// startLifecycleSpan starts the span of a lifecycle change's signal as a
// child of the request that made the change (its stored trace context), as
// startSpan does for an event, so the workflow's work joins that trace.
func startLifecycleSpan(ctx context.Context, name string, c store.LifecycleChange, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracing.Tracer().Start(c.Trace.Context(ctx), name,
		trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
}

// markSynced marks the changes synced as of the numbers read, in one
// statement.
func markSynced[T change](ctx context.Context, cs []T, mark func(context.Context, []store.LifecycleChange) (int, error)) error {
	changes := make([]store.LifecycleChange, len(cs))
	for i, c := range cs {
		changes[i] = c.Change()
	}
	_, err := mark(ctx, changes)
	return err
}

// release gives the claims of changes back.
func release[T change](ctx context.Context, cs []T, give func(context.Context, []uuid.UUID) error) error {
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.Change().ID
	}
	return give(ctx, ids)
}
