package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// A key's workflow (workflows.APIKey) must hear of every change that gives
// the key a deadline or takes one away: Create (with an expiry), Rotate and
// Revoke bump api_keys.lifecycle_seq in the change's own statement or
// transaction, and the worker's relay tells the workflow (lifecycleOutbox).

// KeyLifecycle is what a key's workflow needs to be told about the key as
// of change Seq: whether the key has a deadline to wait for.
type KeyLifecycle struct {
	LifecycleChange
	Pending              bool // Seq has not been marked synced
	Revoked              bool
	Rotated              bool // rotated at least once
	ExpiresAt            *time.Time
	PreviousKeyExpiresAt *time.Time
}

const lifecycleColumns = `id, workspace_id, lifecycle_seq, lifecycle_seq > lifecycle_synced_seq,
	revoked_at IS NOT NULL, last_rotated_at IS NOT NULL, expires_at, previous_key_expires_at`

func scanLifecycle(rows interface{ Scan(...any) error }) (KeyLifecycle, error) {
	var l KeyLifecycle
	err := rows.Scan(&l.ID, &l.WorkspaceID, &l.Seq, &l.Pending, &l.Revoked, &l.Rotated, &l.ExpiresAt, &l.PreviousKeyExpiresAt)
	return l, err
}

// Lifecycle reads a key's lifecycle state, whoever owns it and revoked or
// not; models.ErrNotFound when the row is gone (its workspace was deleted).
func (k APIKeys) Lifecycle(ctx context.Context, id uuid.UUID) (KeyLifecycle, error) {
	l, err := scanLifecycle(k.db.QueryRowContext(ctx, `SELECT `+lifecycleColumns+` FROM api_keys WHERE id = ?`, id))
	if err != nil {
		return KeyLifecycle{}, translate(err, nil)
	}
	return l, nil
}

// ClaimUnsynced leases up to limit pending keys whose last change is no
// newer than changedBefore to the caller until now+lease, oldest change
// first (see lifecycleOutbox.claim).
func (k APIKeys) ClaimUnsynced(ctx context.Context, changedBefore, now time.Time, lease time.Duration, limit int) ([]KeyLifecycle, error) {
	return claim(ctx, keyOutbox(k.db), lifecycleColumns, func(rows *sql.Rows) (KeyLifecycle, error) { return scanLifecycle(rows) },
		changedBefore, now, lease, limit)
}

// ReleaseClaims gives leased keys back at once, for a claimer that stops
// before it got to them, so the next round need not wait for the lease.
func (k APIKeys) ReleaseClaims(ctx context.Context, ids []uuid.UUID) error {
	return keyOutbox(k.db).release(ctx, ids)
}

// MarkLifecycleSynced records that the key's workflow heard of change seq
// (and so of every earlier one); see lifecycleOutbox.markSynced.
func (k APIKeys) MarkLifecycleSynced(ctx context.Context, id uuid.UUID, seq int64) (bool, error) {
	return keyOutbox(k.db).markSynced(ctx, id, seq)
}

func keyOutbox(db bun.IDB) lifecycleOutbox { return lifecycleOutbox{db: db, table: "api_keys"} }
