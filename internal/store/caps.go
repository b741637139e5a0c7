package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// atCap reports whether a workspace already holds max (0: no cap) rows by
// countQuery. Locking the workspace row serialises creates until tx ends; the
// count is a later statement because under READ COMMITTED a snapshot taken
// before the lock was granted would miss the holder's insert.
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
