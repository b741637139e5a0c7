package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// KeyLifecycle is what a key's workflow needs to be told as of change Seq
// (Create with an expiry, Rotate and Revoke each bump lifecycle_seq).
type KeyLifecycle struct {
	LifecycleChange
	Pending              bool // Seq has not been marked synced
	Revoked              bool
	Rotated              bool // rotated at least once
	ExpiresAt            *time.Time
	PreviousKeyExpiresAt *time.Time
}

const lifecycleColumns = `id, workspace_id, lifecycle_seq, lifecycle_seq > lifecycle_synced_seq,
	revoked_at IS NOT NULL, last_rotated_at IS NOT NULL, expires_at, previous_key_expires_at, lifecycle_trace_context`

func scanLifecycle(rows interface{ Scan(...any) error }) (KeyLifecycle, error) {
	var l KeyLifecycle
	err := rows.Scan(&l.ID, &l.WorkspaceID, &l.Seq, &l.Pending, &l.Revoked, &l.Rotated, &l.ExpiresAt, &l.PreviousKeyExpiresAt, (*traceColumn)(&l.Trace))
	return l, err
}

// Lifecycle reads a key's lifecycle state; models.ErrNotFound if it is gone.
func (k APIKeys) Lifecycle(ctx context.Context, id uuid.UUID) (KeyLifecycle, error) {
	l, err := scanLifecycle(k.db.QueryRowContext(ctx, `SELECT `+lifecycleColumns+` FROM api_keys WHERE id = ?`, id))
	if err != nil {
		return KeyLifecycle{}, translate(err, nil)
	}
	return l, nil
}

// ClaimUnsynced leases pending keys to the caller (see claim).
func (k APIKeys) ClaimUnsynced(ctx context.Context, lease time.Duration, limit int) ([]KeyLifecycle, error) {
	return claim(ctx, keyOutbox(k.db), lifecycleColumns, func(rows *sql.Rows) (KeyLifecycle, error) { return scanLifecycle(rows) },
		lease, limit)
}

// MarkSynced marks each key's change synced as of the number read, and
// reports how many it wrote (see lifecycleOutbox.markSynced).
func (k APIKeys) MarkSynced(ctx context.Context, cs []LifecycleChange) (int, error) {
	return keyOutbox(k.db).markSynced(ctx, cs)
}

// ReleaseClaims gives leased keys back at once.
func (k APIKeys) ReleaseClaims(ctx context.Context, ids []uuid.UUID) error {
	return keyOutbox(k.db).release(ctx, ids)
}

// ReleaseFailed gives a leased key back after the failed send of change c,
// held back until its retry time; a key changed since is not charged.
func (k APIKeys) ReleaseFailed(ctx context.Context, c LifecycleChange) (SendFailure, error) {
	return keyOutbox(k.db).releaseFailed(ctx, c)
}

func keyOutbox(db bun.IDB) lifecycleOutbox { return lifecycleOutbox{db: db, table: "api_keys"} }
