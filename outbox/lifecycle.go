package outbox

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// change is a pending change of a lifecycle outbox (API keys, signing secrets).
type change interface{ Change() store.LifecycleChange }

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
