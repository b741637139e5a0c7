package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// atCap reports whether a workspace already holds max rows counted by
// countQuery (which takes the workspace id as its one argument); max 0
// means no cap. It locks the workspace row first (FOR NO KEY UPDATE, which
// leaves the foreign-key checks of other inserts alone), so concurrent
// creates in one workspace are serialised until tx ends and the cap holds
// under any concurrency. The count must be a later statement than the
// lock: under READ COMMITTED each statement reads its own snapshot, and
// one taken before the lock was granted would miss the holder's insert.
// The same holds when countQuery reads a counter instead of counting rows
// (projects read project_counts): the triggers that keep it update it in
// the inserting transaction, so it commits together with the insert.
func atCap(ctx context.Context, tx bun.Tx, workspaceID uuid.UUID, max int, countQuery string) (bool, error) {
	if max <= 0 {
		return false, nil
	}
	if _, err := tx.NewRaw(`SELECT 1 FROM workspaces WHERE id = ? FOR NO KEY UPDATE`, workspaceID).Exec(ctx); err != nil {
		return false, err
	}
	var n int
	if err := tx.NewRaw(countQuery, workspaceID).Scan(ctx, &n); err != nil {
		return false, err
	}
	return n >= max, nil
}
