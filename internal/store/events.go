package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

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
}

func (r eventRow) model() models.Event {
	return models.Event{
		ID: r.ID, WorkspaceID: r.WorkspaceID, Type: models.EventType(r.Type),
		Data: r.Data, DateCreated: r.DateCreated, DispatchedAt: r.DispatchedAt,
		Recipients: r.Recipients,
	}
}

// Events reads and writes published events and their outbox mark.
type Events struct{ db bun.IDB }

// Events returns the event queries.
func (s *Store) Events() Events { return Events{db: s.db} }

// recipientsSQL selects, inside an event's INSERT (arguments are SQL
// expressions), the workspace's enabled subscriptions to the type in id order
// but except; the one snapshot fixes exactly who was enabled at the insert.
func recipientsSQL(workspace, eventType, except string) string {
	q := `ARRAY(SELECT s.id FROM webhook_subscriptions s
	WHERE s.workspace_id = ` + workspace + ` AND s.enabled AND s.event_types @> ARRAY[` + eventType + `]::text[]`
	if except != "" {
		q += ` AND s.id <> ` + except
	}
	return q + ` ORDER BY s.id)`
}

// dispatchedWhenNoneSQL is an event's dispatched_at at creation: at when it
// has no recipients (no workflow needed), else NULL, leaving it in the outbox.
func dispatchedWhenNoneSQL(recipients, at string) string {
	return `CASE WHEN cardinality(` + recipients + `) = 0 THEN ` + at + ` END`
}

// recipientsExpr is Create's recipients: workspace and type are arguments.
var recipientsExpr = recipientsSQL("?", "?", "")

// Create stores an event with its recipients fixed. The row is also its
// outbox entry, so once the insert commits the event is delivered eventually;
// an event no subscription takes needs no workflow and is stored dispatched.
func (e Events) Create(ctx context.Context, in models.NewEvent) (models.Event, error) {
	row := eventRow{
		ID:          uuid.New(),
		WorkspaceID: in.WorkspaceID,
		Type:        string(in.Type),
		Data:        in.Data,
		DateCreated: pgTime(time.Now()),
	}
	_, err := e.db.NewInsert().Model(&row).
		Value("recipients", recipientsExpr, in.WorkspaceID, string(in.Type)).
		Value("dispatched_at", dispatchedWhenNoneSQL(recipientsExpr, "?::timestamptz"),
			in.WorkspaceID, string(in.Type), row.DateCreated).
		Returning("recipients, dispatched_at").Exec(ctx)
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
		return models.Invalid("data", "cannot be stored: PostgreSQL's jsonb refuses it (a number beyond its range, or nesting too deep)")
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

// ClaimUndispatched leases up to limit undispatched events, oldest first.
// SKIP LOCKED gives relays disjoint rows. Nothing filters on date_created: it
// is the API host's clock, and comparing it with now() could skip new events.
func (e Events) ClaimUndispatched(ctx context.Context, limit int, lease time.Duration) ([]models.Event, error) {
	var rows []eventRow
	err := e.db.NewRaw(`UPDATE events e SET dispatch_claimed_until = now() + make_interval(secs => ?)
		FROM (SELECT id FROM events
			WHERE dispatched_at IS NULL
			AND (dispatch_claimed_until IS NULL OR dispatch_claimed_until < now())
			ORDER BY date_created LIMIT ? FOR UPDATE SKIP LOCKED) c
		WHERE e.id = c.id
		RETURNING e.id, e.workspace_id, e.type, e.date_created, e.recipients`,
		lease.Seconds(), limit).Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	slices.SortFunc(rows, func(a, b eventRow) int { return a.DateCreated.Compare(b.DateCreated) })
	out := make([]models.Event, len(rows))
	for i, r := range rows {
		out[i] = r.model()
	}
	return out, nil
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
