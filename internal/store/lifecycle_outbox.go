package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// LifecycleChange is a row's pending change as of change number Seq.
type LifecycleChange struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	Seq         int64
	// Trace is the trace context of the request that made the change; nil
	// when tracing was off.
	Trace tracing.Carrier
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

// claim leases up to limit pending rows, oldest change first, until the
// database's now() + lease (passing over rows held back after a failed send,
// releaseFailed), and scans each (columns of it) with scan. SKIP
// LOCKED lets replicas pass over each other's rows, and the locks last only
// this statement, never across the caller's Temporal calls. Only the
// database's clock is compared: date_updated may come from an API host's
// clock, and a host running ahead must not hide its changes. Unlike events it
// needs no turns across workspaces: a key or subscription is one pending row
// however many changes it had, and a workspace holds at most its caps (1,000
// keys, 100 subscriptions by default), two batches at worst.
func claim[T any](ctx context.Context, o lifecycleOutbox, columns string, scan func(*sql.Rows) (T, error),
	lease time.Duration, limit int,
) ([]T, error) {
	rows, err := o.db.QueryContext(ctx, `UPDATE `+o.table+` t SET lifecycle_claimed_until = now() + make_interval(secs => ?)
		FROM (SELECT id AS claimed FROM `+o.table+`
			WHERE lifecycle_seq > lifecycle_synced_seq
				AND (lifecycle_claimed_until IS NULL OR lifecycle_claimed_until <= now())
			ORDER BY date_updated, id
			LIMIT ?
			FOR UPDATE SKIP LOCKED) c
		WHERE t.id = c.claimed
		RETURNING `+columns,
		lease.Seconds(), limit)
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

// bumpLifecycleSQL records a new change of a row in an UPDATE's SET list. The
// change starts without the failures of the one it replaces: a row held
// back for minutes after failed sends (releaseFailed) is claimable at once,
// since the new change (a revocation after a failing rotation, say) may well
// go through. A plain lease (no failures) is left alone, so a relay's call in
// flight is not repeated at once by another. trace is the placeholder
// ("?", "?6") of the change's trace context (lifecycleTrace).
func bumpLifecycleSQL(trace string) string {
	return `lifecycle_seq = lifecycle_seq + 1, lifecycle_failures = 0,
	lifecycle_claimed_until = CASE WHEN lifecycle_failures > 0 THEN NULL ELSE lifecycle_claimed_until END,
	lifecycle_trace_context = ` + trace + `::jsonb`
}

// lifecycleTrace is the trace context of the request making a change
// (ctx's), stored with it for the relay to continue (NULL: tracing off).
func lifecycleTrace(ctx context.Context) *string { return tracing.FromContext(ctx).JSON() }

// traceColumn is a stored trace context (events.trace_context,
// lifecycle_trace_context) as it is read. Reading never fails: NULL, JSON
// null or anything but an object of strings (a row edited by hand, say)
// reads as none, so one row cannot fail the claims of a whole outbox; its
// work goes on, untraced.
type traceColumn map[string]string

// Scan implements sql.Scanner.
func (c *traceColumn) Scan(src any) error {
	*c = nil
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return nil
	}
	var m map[string]string
	if json.Unmarshal(b, &m) == nil {
		*c = m
	}
	return nil
}

// releaseFailed gives a leased row back after the failed send of change c,
// held back until its retry time (see releaseFailed). A row changed since
// (a newer lifecycle_seq, which dropped the old failures) is not charged
// with the old change's failure.
func (o lifecycleOutbox) releaseFailed(ctx context.Context, c LifecycleChange) (SendFailure, error) {
	return releaseFailed(ctx, o.db, o.table, "lifecycle", " AND lifecycle_seq = "+strconv.FormatInt(c.Seq, 10), c.ID)
}

// markSynced marks each change synced as of its number, in one statement,
// and reports how many rows it wrote. It is conditional, so a change made
// since the number was read stays pending, and a late mark of an older
// number writes nothing. The row's next change starts without the failures
// of this one.
func (o lifecycleOutbox) markSynced(ctx context.Context, cs []LifecycleChange) (int, error) {
	if len(cs) == 0 {
		return 0, nil
	}
	ids, seqs := make([]uuid.UUID, len(cs)), make([]int64, len(cs))
	for i, c := range cs {
		ids[i], seqs[i] = c.ID, c.Seq
	}
	res, err := o.db.NewRaw(`UPDATE `+o.table+` t SET lifecycle_synced_seq = c.seq, lifecycle_claimed_until = NULL,
			lifecycle_failures = 0
		FROM unnest(?::uuid[], ?::bigint[]) AS c(id, seq)
		WHERE t.id = c.id AND t.lifecycle_synced_seq < c.seq`, pgdialect.Array(ids), pgdialect.Array(seqs)).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
