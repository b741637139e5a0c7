package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/models"
)

// eventListRow is a row of ListEvents: the event without its recipients.
type eventListRow struct {
	eventRow
	windowCount
}

func (r eventListRow) detail() models.EventDetail {
	return models.EventDetail{ID: r.ID, Type: models.EventType(r.Type), Data: r.Data, DateCreated: r.DateCreated}
}

// List returns one page of a workspace's events, newest first, without
// recipients; the total is counted only when the page cannot tell it.
func (e Events) List(ctx context.Context, f models.EventFilter) (models.Page[models.EventDetail], error) {
	where, args := eventWhere(f)
	var rows []eventListRow
	err := e.db.NewRaw(`SELECT e.id, e.type, e.data, e.date_created FROM events AS e
		WHERE e.id = ANY(ARRAY(SELECT e.id FROM events AS e WHERE `+where+`
			ORDER BY e.date_created DESC, e.id DESC LIMIT ?1 OFFSET ?2))
		ORDER BY e.date_created DESC, e.id DESC`, args...).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.EventDetail]{}, translate(err, nil)
	}
	return pageWithTotal(ctx, f.Page, rows, eventListRow.detail, func(ctx context.Context) (int, error) {
		var n int
		err := e.db.NewRaw(`SELECT count(*) FROM events AS e WHERE `+where, args...).Scan(ctx, &n)
		return n, err
	})
}

// pageWithTotal finishes a page whose rows carry no total: a partial or empty
// first page tells it; otherwise count runs.
func pageWithTotal[R any, T any](ctx context.Context, page models.PageRequest, rows []R, model func(R) T,
	count func(context.Context) (int, error),
) (models.Page[T], error) {
	items := make([]T, len(rows))
	for i, r := range rows {
		items[i] = model(r)
	}
	n := len(rows)
	if n > 0 && n < page.PerPage || n == 0 && page.Page == 1 {
		return models.NewPage(page, page.Offset()+n, items), nil
	}
	total, err := count(ctx)
	if err != nil {
		return models.Page[T]{}, translate(err, nil)
	}
	return models.NewPage(page, total, items), nil
}

// ceilMicro rounds t up to PostgreSQL's microsecond; nil stays nil.
func ceilMicro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := t.Truncate(time.Microsecond)
	if c.Before(*t) {
		c = c.Add(time.Microsecond)
	}
	return &c
}

// recipientRow is one recipient's delivery status.
type recipientRow struct {
	EventID        uuid.UUID  `bun:"event_id"`
	SubscriptionID uuid.UUID  `bun:"subscription_id"`
	Status         string     `bun:"status"`
	Attempts       int        `bun:"attempts"`
	NextAttemptAt  *time.Time `bun:"next_attempt_at"`
	StatusCode     *int       `bun:"status_code"`
}

func (r recipientRow) model() models.EventRecipient {
	return models.EventRecipient{
		SubscriptionID: r.SubscriptionID, Status: models.DeliveryStatus(r.Status),
		Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt, StatusCode: r.StatusCode,
	}
}

// recipientsOf lists the recipients of the event the enclosing query names
// e (r.id, in order r.ord), with their state (st) or, lacking one, their
// attempt records (rec). NULL recipients (stored before they were fixed)
// and missing state rows fall back to the attempt records.
const recipientsOf = `unnest(coalesce(e.recipients, ARRAY(
		SELECT subscription_id FROM webhook_delivery_states WHERE event_id = e.id
		UNION SELECT subscription_id FROM webhook_deliveries WHERE event_id = e.id
		ORDER BY 1))) WITH ORDINALITY AS r(id, ord)
	JOIN webhook_subscriptions AS s ON s.id = r.id AND s.workspace_id = e.workspace_id
	LEFT JOIN webhook_delivery_states AS st ON st.event_id = e.id AND st.subscription_id = r.id
	LEFT JOIN LATERAL (
		SELECT max(d.attempt_number) AS attempts, bool_or(d.success) AS succeeded,
			(array_agg(d.status_code ORDER BY d.attempt_number DESC))[1] AS status_code
		FROM webhook_deliveries AS d WHERE d.subscription_id = r.id AND d.event_id = e.id
	) AS rec ON st.event_id IS NULL`

// recipientStatus is a row of recipientsOf's status.
const recipientStatus = `coalesce(st.status, CASE WHEN rec.succeeded THEN 'succeeded' WHEN rec.attempts IS NOT NULL THEN 'failed' ELSE 'pending' END)`

// recipientsQuery reads the recipients of a workspace's events (?0, ?1)
// with their delivery status. A pending recipient's next_attempt_at is when
// its attempt is or was due, never NULL: the event's acceptance before any
// attempt (attempt 1 is due at once, and may be in flight), the failed
// attempt's time when the next follows without a wait.
const recipientsQuery = `SELECT e.id AS event_id, r.id AS subscription_id,
		` + recipientStatus + ` AS status,
		coalesce(st.attempts, rec.attempts, 0) AS attempts,
		CASE WHEN st.status = 'pending' THEN coalesce(st.next_attempt_at, st.date_updated)
			WHEN st.status IS NULL AND rec.attempts IS NULL THEN e.date_created END AS next_attempt_at,
		coalesce(st.last_status_code, rec.status_code) AS status_code
	FROM events AS e
	CROSS JOIN LATERAL ` + recipientsOf + `
	WHERE e.id = ANY(?0) AND e.workspace_id = ?1
	ORDER BY e.id, r.ord`

// recipients reads the recipients of the workspace's events ids, by event.
func (e Events) recipients(ctx context.Context, workspaceID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID][]models.EventRecipient, error) {
	var rows []recipientRow
	if err := e.db.NewRaw(recipientsQuery, pgdialect.Array(ids), workspaceID).Scan(ctx, &rows); err != nil {
		return nil, translate(err, nil)
	}
	out := make(map[uuid.UUID][]models.EventRecipient, len(ids))
	for _, r := range rows {
		out[r.EventID] = append(out[r.EventID], r.model())
	}
	return out, nil
}

// Detail returns a workspace's event with each recipient's delivery status.
func (e Events) Detail(ctx context.Context, workspaceID, id uuid.UUID) (models.EventDetail, error) {
	var row eventListRow
	err := e.db.NewRaw(`SELECT id, type, data, date_created FROM events WHERE id = ? AND workspace_id = ?`,
		id, workspaceID).Scan(ctx, &row)
	if err != nil {
		if err = translate(err, nil); err == models.ErrNotFound {
			return models.EventDetail{}, models.NotFound("event")
		}
		return models.EventDetail{}, err
	}
	recipients, err := e.recipients(ctx, workspaceID, []uuid.UUID{id})
	if err != nil {
		return models.EventDetail{}, err
	}
	ev := row.detail()
	ev.Recipients = recipients[id]
	if ev.Recipients == nil {
		ev.Recipients = []models.EventRecipient{}
	}
	return ev, nil
}
