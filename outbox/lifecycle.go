package outbox

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// change is a pending change of a lifecycle outbox (API keys, signing secrets).
type change interface{ Change() store.LifecycleChange }

// markSynced marks each change synced as of the number read.
func markSynced[T change](ctx context.Context, cs []T, mark func(context.Context, uuid.UUID, int64) (bool, error)) error {
	for _, c := range cs {
		if _, err := mark(ctx, c.Change().ID, c.Change().Seq); err != nil {
			return err
		}
	}
	return nil
}

// release gives the claims of changes back.
func release[T change](ctx context.Context, cs []T, give func(context.Context, []uuid.UUID) error) error {
	ids := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		ids[i] = c.Change().ID
	}
	return give(ctx, ids)
}
