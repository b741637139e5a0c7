package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// ClaimUnsyncedSecrets leases subscriptions with unsynced rotations (see claim).
func (w Webhooks) ClaimUnsyncedSecrets(ctx context.Context, lease time.Duration, limit int) ([]LifecycleChange, error) {
	scan := func(rows *sql.Rows) (c LifecycleChange, err error) {
		return c, rows.Scan(&c.ID, &c.WorkspaceID, &c.Seq, (*traceColumn)(&c.Trace))
	}
	return claim(ctx, secretOutbox(w.db), `id, workspace_id, lifecycle_seq, lifecycle_trace_context`, scan, lease, limit)
}

// ReleaseSecretClaims gives leased subscriptions back at once.
func (w Webhooks) ReleaseSecretClaims(ctx context.Context, ids []uuid.UUID) error {
	return secretOutbox(w.db).release(ctx, ids)
}

// ReleaseFailedSecret gives a leased subscription back after the failed
// send of change c, held back until its retry time; a subscription rotated
// since is not charged.
func (w Webhooks) ReleaseFailedSecret(ctx context.Context, c LifecycleChange) (SendFailure, error) {
	return secretOutbox(w.db).releaseFailed(ctx, c)
}

func secretOutbox(db bun.IDB) lifecycleOutbox {
	return lifecycleOutbox{db: db, table: "webhook_subscriptions"}
}

// MarkSecretsSynced marks each rotation synced as of the number read, and
// reports how many it wrote.
func (w Webhooks) MarkSecretsSynced(ctx context.Context, cs []LifecycleChange) (int, error) {
	return secretOutbox(w.db).markSynced(ctx, cs)
}
