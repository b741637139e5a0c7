package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

type eventRow struct {
	bun.BaseModel `bun:"table:events"`
	ID            uuid.UUID       `bun:"id,pk"`
	WorkspaceID   uuid.UUID       `bun:"workspace_id"`
	Type          string          `bun:"type"`
	Data          json.RawMessage `bun:"data,type:jsonb"`
	DateCreated   time.Time       `bun:"date_created"`
	DispatchedAt  *time.Time      `bun:"dispatched_at"`
	Recipients    []uuid.UUID     `bun:"recipients,array"`
	// TraceContext: written by createEventSQL, read by the relay's claim.
	TraceContext traceColumn `bun:"trace_context,type:jsonb,nullzero"`
}

func (r eventRow) model() models.Event {
	return models.Event{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Type: models.EventType(r.Type),
		Data: r.Data, DateCreated: r.DateCreated, DispatchedAt: r.DispatchedAt,
		Recipients: r.Recipients, Trace: tracing.Carrier(r.TraceContext),
	}
}

// Events reads and writes published events and their outbox mark.
type Events struct{ db bun.IDB }

// Events returns the event queries.
func (s *Store) Events() Events { return Events{db: s.db} }

// createEventSQL calls event_create_v1 (migration 20261128000100), which
// fixes the recipients in the insert's snapshot. jsonb takes the data as
// text: a []byte argument would go as bytea.
const createEventSQL = `SELECT recipients, dispatched_at FROM event_create_v1(
	p_id => ?, p_workspace_id => ?, p_type => ?, p_data => ?, p_now => ?, p_trace_context => ?)`

// Create stores an event with its recipients fixed. The row is also its
// outbox entry, so once the insert commits the event is delivered eventually;
// an event no subscription takes needs no workflow and is stored dispatched.
func (e Events) Create(ctx context.Context, in models.NewEvent) (models.Event, error) {
	row := eventRow{
		ID:           uuid.New(),
		WorkspaceID:  in.WorkspaceID,
		Type:         string(in.Type),
		Data:         in.Data,
		DateCreated:  pgTime(time.Now()),
		TraceContext: traceColumn(in.Trace),
	}
	err := e.db.NewRaw(createEventSQL, row.ID, row.WorkspaceID, row.Type, string(row.Data), row.DateCreated,
		tracing.Carrier(in.Trace).JSON()).Scan(ctx, &row)
	if err != nil {
		if bad := invalidJSONB(err); bad != nil {
			return models.Event{}, bad
		}
		return models.Event{}, translate(err, nil)
	}
	return row.model(), nil
}

// invalidJSONB recognises JSON that Go accepts but jsonb refuses (\u0000,
// huge numbers, deep nesting): the caller's fault, not a server error.
func invalidJSONB(err error) error {
	var pgErr pgdriver.Error
	if !errors.As(err, &pgErr) {
		return nil
	}
	code := pgErr.Field('C')
	if strings.HasPrefix(code, "22") || code == "54001" {
		return models.Invalid("data", "cannot be stored: PostgreSQL's jsonb refuses it (\\u0000 in a string, a number beyond its range, or nesting too deep)")
	}
	return nil
}

// Get returns an event, whatever its workspace (for the worker).
func (e Events) Get(ctx context.Context, id uuid.UUID) (models.Event, error) {
	var row eventRow
	if err := e.db.NewSelect().Model(&row).Where("id = ?", id).Scan(ctx); err != nil {
		err = translate(err, nil)
		if err == models.ErrNotFound {
			return models.Event{}, models.NotFound("event")
		}
		return models.Event{}, err
	}
	return row.model(), nil
}

// claimableSQL holds for an undispatched event neither leased to a relay nor
// held back after a failed start (ReleaseFailed).
const claimableSQL = `e.dispatched_at IS NULL AND (e.dispatch_claimed_until IS NULL OR e.dispatch_claimed_until < now())`

// claimSQL leases events in turns across workspaces: turn 1 is each
// workspace's oldest claimable event, turn 2 its second, and so on. Within
// each turn the workspaces go in rotation by id, starting after the one the
// relay's previous claim ended on (ClaimTurns), so every workspace with
// pending events gets a place in turn 1 within ceil(workspaces / limit) of
// a relay's claims, and claims share the batch evenly: however many
// workspaces have a backlog, a quiet one's event is never left behind them
// (ordered by the age of each workspace's oldest event instead, turn 1 would
// leave it behind as soon as more workspaces than a claim's limit had older
// events).
//
// The walk over workspaces (ws) starts at the cursor and wraps around once:
// each step is one probe of events_undispatched_workspace_idx for the next
// workspace id with a pending event, so a claim reads about as many
// workspaces and rows as it leases, however many workspaces wait (sorting
// every waiting workspace by its place in the rotation would cost 0.6 s per
// claim with 50,000 of them: BenchmarkClaimManyWorkspacesPending). Recursive CTEs
// yield rows in order and only as many as the LIMIT above them pulls
// (PostgreSQL evaluates them breadth first, so turn 2 starts only once
// every workspace's turn 1 has been read). Rows are locked in the outer
// select (FOR UPDATE refuses recursion in its own query level), past the
// LIMIT's candidates: SKIP LOCKED passes over another relay's rows and keeps
// pulling turns, so concurrent claims get disjoint, full batches. The lease
// filter is repeated there because a row another relay leased since this
// statement's snapshot is re-checked on its newest version. Test events
// come first, as turn 0: someone is watching their endpoint for one, and a
// backlog of their own workspace must not hold it
// (events_undispatched_test_idx). ?0 is the test event type, ?1 the
// cursor, ?2 the limit, ?3 the lease in seconds.
var claimSQL = `WITH RECURSIVE ws(id, wrapped) AS (
		(SELECT n.id, n.wrapped FROM (VALUES (?1::uuid, false)) AS c(id, wrapped)
			CROSS JOIN LATERAL (` + nextWorkspaceSQL("c") + `) n)
		UNION ALL
		SELECT n.id, n.wrapped FROM ws CROSS JOIN LATERAL (` + nextWorkspaceSQL("ws") + `) n
	), turns(workspace_id, id, date_created, turn) AS (
		(SELECT ws.id, h.id, h.date_created, 1 FROM ws CROSS JOIN LATERAL (
			SELECT e.id, e.date_created FROM events e
			WHERE e.workspace_id = ws.id AND e.type <> ?0 AND ` + claimableSQL + `
			ORDER BY e.date_created, e.id LIMIT 1) h)
		UNION ALL
		SELECT t.workspace_id, n.id, n.date_created, t.turn + 1 FROM turns t CROSS JOIN LATERAL (
			SELECT e.id, e.date_created FROM events e
			WHERE e.workspace_id = t.workspace_id AND e.type <> ?0 AND ` + claimableSQL + `
				AND (e.date_created, e.id) > (t.date_created, t.id)
			ORDER BY e.date_created, e.id LIMIT 1) n
	), tests(id, turn) AS (
		SELECT e.id, 0 FROM events e WHERE e.type = ?0 AND ` + claimableSQL + `
		ORDER BY e.date_created, e.id LIMIT ?2
	)
	UPDATE events u SET dispatch_claimed_until = now() + make_interval(secs => ?3)
	FROM (SELECT e.id, t.turn FROM (SELECT id, turn FROM tests UNION ALL SELECT id, turn FROM turns) t
		JOIN events e ON e.id = t.id
		WHERE ` + claimableSQL + `
		LIMIT ?2 FOR UPDATE OF e SKIP LOCKED) c
	WHERE u.id = c.id
	RETURNING u.id, u.workspace_id, u.type, u.date_created, u.recipients, u.trace_context, c.turn`

// nextWorkspaceSQL is the step of claimSQL's walk from the row at (id,
// wrapped): the next workspace id with a pending event after it, up to the
// highest, then (wrapped) from the lowest up to the cursor; no row once the
// walk is back at the cursor. Each branch is one index probe, and the
// second runs only when the first finds nothing.
func nextWorkspaceSQL(from string) string {
	return `SELECT * FROM (
			(SELECT e.workspace_id AS id, ` + from + `.wrapped AS wrapped FROM events e
				WHERE e.dispatched_at IS NULL AND e.workspace_id > ` + from + `.id
					AND (NOT ` + from + `.wrapped OR e.workspace_id <= ?1::uuid)
				ORDER BY e.workspace_id LIMIT 1)
			UNION ALL
			(SELECT e.workspace_id, true FROM events e
				WHERE NOT ` + from + `.wrapped AND e.dispatched_at IS NULL AND e.workspace_id <= ?1::uuid
				ORDER BY e.workspace_id LIMIT 1)
		) s LIMIT 1`
}

// claimedRow is an event claimSQL leased, with its turn.
type claimedRow struct {
	eventRow
	Turn int64 `bun:"turn"`
}

// ClaimTurns is where a relay's rotation across workspaces stands: the
// workspace its last claim ended on. The zero value starts at the lowest
// id. Claims sharing one (a relay's claimers) take turns, so each starts
// where the one before it ended; each worker replica rotates on its own.
type ClaimTurns struct {
	mu    sync.Mutex
	after uuid.UUID
}

// lock holds the rotation through a claim and returns its cursor: a claim
// that read the cursor before the previous one moved it would serve the
// same workspaces again. A nil rotation always starts at the lowest id.
func (t *ClaimTurns) lock() uuid.UUID {
	if t == nil {
		return uuid.Nil
	}
	t.mu.Lock()
	return t.after
}

func (t *ClaimTurns) unlock() {
	if t != nil {
		t.mu.Unlock()
	}
}

// moveTo sets the cursor to the last workspace a locked claim served.
func (t *ClaimTurns) moveTo(ws uuid.UUID) {
	if t != nil {
		t.after = ws
	}
}

// ClaimUndispatched leases up to limit undispatched events, test events
// first, then in turns across workspaces and oldest first within each
// (claimSQL), and returns them in that order. turns carries the rotation
// from one claim to the next (nil: start at the lowest workspace id every
// time). SKIP LOCKED gives relays disjoint rows. Nothing filters on
// date_created: it is the API host's clock, and comparing it with now()
// could skip new events.
func (e Events) ClaimUndispatched(ctx context.Context, limit int, lease time.Duration, turns *ClaimTurns) ([]models.Event, error) {
	after := turns.lock()
	defer turns.unlock()
	var rows []claimedRow
	test := models.EventWebhookTest
	if err := e.db.NewRaw(claimSQL, test, after, limit, lease.Seconds()).Scan(ctx, &rows); err != nil {
		return nil, translate(err, nil)
	}
	// RETURNING has no order of its own: test events by age; then by turn,
	// in rotation after the cursor (PostgreSQL's uuid order is its bytes').
	wrapped := func(ws uuid.UUID) bool { return slices.Compare(ws[:], after[:]) <= 0 }
	slices.SortFunc(rows, func(a, b claimedRow) int {
		if c := cmp.Compare(a.Turn, b.Turn); c != 0 || a.Turn == 0 {
			return cmp.Or(c, a.DateCreated.Compare(b.DateCreated), slices.Compare(a.ID[:], b.ID[:]))
		}
		return cmp.Or(compareBool(wrapped(a.WorkspaceID), wrapped(b.WorkspaceID)),
			slices.Compare(a.WorkspaceID[:], b.WorkspaceID[:]))
	})
	return claimedEvents(rows, turns), nil
}

// claimedEvents are a claim's sorted rows as events. The rotation's next
// claim goes on after the last workspace served, in whatever turn the
// limit cut: ending each claim at the end of turn 1 would serve the lowest
// ids' second events every time.
func claimedEvents(rows []claimedRow, turns *ClaimTurns) []models.Event {
	out := make([]models.Event, len(rows))
	for i, r := range rows {
		out[i] = r.model()
		if r.Turn >= 1 {
			turns.moveTo(r.WorkspaceID)
		}
	}
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// MarkManyDispatched marks the events whose workflows were started.
func (e Events) MarkManyDispatched(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := e.db.NewUpdate().TableExpr("events").Set("dispatched_at = now()").
		Where("id IN (?) AND dispatched_at IS NULL", bun.List(ids)).Exec(ctx)
	return translate(err, nil)
}

// ReleaseClaims gives back leased events not started, ending their lease.
func (e Events) ReleaseClaims(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := e.db.NewUpdate().TableExpr("events").Set("dispatch_claimed_until = NULL").
		Where("id IN (?) AND dispatched_at IS NULL", bun.List(ids)).Exec(ctx)
	return translate(err, nil)
}

// ReleaseFailed gives back a leased event whose start failed, counting the
// failure and holding it back until its retry time (see releaseFailed).
func (e Events) ReleaseFailed(ctx context.Context, id uuid.UUID) (SendFailure, error) {
	return releaseFailed(ctx, e.db, "events", "dispatch", " AND dispatched_at IS NULL", id)
}

// DeleteExpired deletes up to limit dispatched events created before cutoff
// that no delivery record refers to; run it after the records expire.
func (e Events) DeleteExpired(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := e.db.NewRaw(`DELETE FROM events WHERE id IN (
			SELECT ev.id FROM events ev
			WHERE ev.date_created < ? AND ev.dispatched_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id)
			LIMIT ?)`, cutoff, limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
