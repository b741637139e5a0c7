package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The lifecycle outbox. A key's workflow (workflows.APIKey) must hear of
// every change that gives the key a deadline or takes one away. Create
// (with an expiry), Rotate and Revoke bump api_keys.lifecycle_seq in the
// change's own statement or transaction, so a committed change is never
// without its record; lifecycle_synced_seq is the newest change Temporal
// accepted a signal for. A key is pending while the first is ahead of the
// second. Whoever signals (the API right after commit, or the worker's
// reconciler later) reads the number first and marks exactly that number
// synced afterwards, so a change made in between stays pending.

// KeyLifecycle is what a key's workflow needs to be told about the key as
// of change Seq: whether the key has a deadline to wait for.
type KeyLifecycle struct {
	ID                   uuid.UUID
	WorkspaceID          uuid.UUID
	Seq                  int64
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

// ClaimUnsynced leases up to limit pending keys whose last change is older
// than changedBefore to the caller until now+lease, oldest change first.
// FOR UPDATE SKIP LOCKED lets concurrent claimers (several worker replicas)
// pass over each other's rows, and the lease keeps them apart afterwards;
// the row locks last only for this statement, never across the caller's
// Temporal calls, so rotations and revocations of those keys do not wait.
// A lease that lapses (the claimer crashed or gave up) makes the key
// claimable again.
func (k APIKeys) ClaimUnsynced(ctx context.Context, changedBefore, now time.Time, lease time.Duration, limit int) ([]KeyLifecycle, error) {
	now = pgTime(now)
	rows, err := k.db.QueryContext(ctx, `UPDATE api_keys k SET lifecycle_claimed_until = ?
		FROM (SELECT id AS claimed FROM api_keys
			WHERE lifecycle_seq > lifecycle_synced_seq AND date_updated <= ?
				AND (lifecycle_claimed_until IS NULL OR lifecycle_claimed_until <= ?)
			ORDER BY date_updated, id
			LIMIT ?
			FOR UPDATE SKIP LOCKED) c
		WHERE k.id = c.claimed
		RETURNING `+lifecycleColumns,
		now.Add(lease), pgTime(changedBefore), now, limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	var out []KeyLifecycle
	for rows.Next() {
		l, err := scanLifecycle(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, l)
	}
	return out, translate(rows.Err(), nil)
}

// ReleaseClaims gives leased keys back at once, for a claimer that stops
// before it got to them, so the next round need not wait for the lease.
func (k APIKeys) ReleaseClaims(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := k.db.NewRaw(`UPDATE api_keys SET lifecycle_claimed_until = NULL WHERE id IN (?)`, bun.List(ids)).Exec(ctx)
	return translate(err, nil)
}

// MarkLifecycleSynced records that the key's workflow heard of change seq
// (and so of every earlier one). It is conditional: a newer change made
// since seq was read stays pending, and marking an older seq after a newer
// one writes nothing. It reports whether a row was written.
func (k APIKeys) MarkLifecycleSynced(ctx context.Context, id uuid.UUID, seq int64) (bool, error) {
	res, err := k.db.NewRaw(`UPDATE api_keys SET lifecycle_synced_seq = ?, lifecycle_claimed_until = NULL
		WHERE id = ? AND lifecycle_synced_seq < ?`, seq, id, seq).Exec(ctx)
	if err != nil {
		return false, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
