package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// LifecycleChange is a row's pending change as of change number Seq.
type LifecycleChange struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Seq         int64
}

// Change is the change itself (promoted to the types that embed it).
func (c LifecycleChange) Change() LifecycleChange { return c }

// lifecycleOutbox is the outbox kept on the rows of a table whose changes a
// deadline-timer workflow must hear of. Each change bumps lifecycle_seq in its
// own statement, so a committed change is never without its record; a row is
// pending while lifecycle_seq is ahead of lifecycle_synced_seq.
type lifecycleOutbox struct {
	db    bun.IDB
	table string
}

// claim leases pending rows last changed by changedBefore, oldest first. SKIP
// LOCKED lets replicas pass over each other's rows, and the locks last only
// this statement, never across the caller's Temporal calls.
func claim[T any](ctx context.Context, o lifecycleOutbox, columns string, scan func(*sql.Rows) (T, error),
	changedBefore, now time.Time, lease time.Duration, limit int,
) ([]T, error) {
	now = pgTime(now)
	rows, err := o.db.QueryContext(ctx, `UPDATE `+o.table+` t SET lifecycle_claimed_until = ?
		FROM (SELECT id AS claimed FROM `+o.table+`
			WHERE lifecycle_seq > lifecycle_synced_seq AND date_updated <= ?
				AND (lifecycle_claimed_until IS NULL OR lifecycle_claimed_until <= ?)
			ORDER BY date_updated, id
			LIMIT ?
			FOR UPDATE SKIP LOCKED) c
		WHERE t.id = c.claimed
		RETURNING `+columns,
		now.Add(lease), pgTime(changedBefore), now, limit)
	if err != nil {
		return nil, translate(err, nil)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, translate(err, nil)
		}
		out = append(out, v)
	}
	return out, translate(rows.Err(), nil)
}

// release gives leased rows back at once.
func (o lifecycleOutbox) release(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := o.db.NewRaw(`UPDATE `+o.table+` SET lifecycle_claimed_until = NULL WHERE id IN (?)`, bun.List(ids)).Exec(ctx)
	return translate(err, nil)
}

// markSynced records that the workflow heard of change seq. It is
// conditional, so a change made since seq was read stays pending.
func (o lifecycleOutbox) markSynced(ctx context.Context, id uuid.UUID, seq int64) (bool, error) {
	res, err := o.db.NewRaw(`UPDATE `+o.table+` SET lifecycle_synced_seq = ?, lifecycle_claimed_until = NULL
		WHERE id = ? AND lifecycle_synced_seq < ?`, seq, id, seq).Exec(ctx)
	if err != nil {
		return false, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
