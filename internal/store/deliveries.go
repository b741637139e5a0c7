package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

type deliveryRow struct {
	bun.BaseModel  `bun:"table:webhook_deliveries"`
	ID             uuid.UUID `bun:"id,pk"`
	SubscriptionID uuid.UUID `bun:"subscription_id"`
	EventID        uuid.UUID `bun:"event_id"`
	AttemptNumber  int       `bun:"attempt_number"`
	Success        bool      `bun:"success"`
	StatusCode     *int      `bun:"status_code"`
	ResponseBody   string    `bun:"response_body"`
	ResponseTimeMs int       `bun:"response_time_ms"`
	ErrorMessage   *string   `bun:"error_message"`
	DateCreated    time.Time `bun:"date_created"`
}

func (r deliveryRow) model() models.WebhookDelivery {
	return models.WebhookDelivery{
		ID: r.ID, EventID: r.EventID, AttemptNumber: r.AttemptNumber, Success: r.Success,
		StatusCode: r.StatusCode, ResponseBody: r.ResponseBody, ResponseTimeMs: r.ResponseTimeMs,
		ErrorMessage: r.ErrorMessage, DateCreated: r.DateCreated, SubscriptionID: r.SubscriptionID,
	}
}

// Deliveries reads and writes the records of delivery attempts.
type Deliveries struct{ db bun.IDB }

// Deliveries returns the delivery record queries.
func (s *Store) Deliveries() Deliveries { return Deliveries{db: s.db} }

// Record is RecordAttempt with no options: it returns the stored record and
// whether this call wrote it.
func (d Deliveries) Record(ctx context.Context, in models.WebhookDelivery) (models.WebhookDelivery, bool, error) {
	r, err := d.RecordAttempt(ctx, in, RecordOptions{Now: in.DateCreated})
	return r.Delivery, r.Wrote, err
}

// Find returns the record of one attempt.
func (d Deliveries) Find(ctx context.Context, subscriptionID, eventID uuid.UUID, attempt int) (models.WebhookDelivery, error) {
	var row deliveryRow
	err := d.db.NewSelect().Model(&row).
		Where("subscription_id = ? AND event_id = ? AND attempt_number = ?", subscriptionID, eventID, attempt).
		Scan(ctx)
	if err != nil {
		return models.WebhookDelivery{}, translate(err, nil)
	}
	return row.model(), nil
}

// List returns one page of a subscription's records, newest first, with the
// exact total from webhook_delivery_counts.
func (d Deliveries) List(ctx context.Context, workspaceID, subscriptionID uuid.UUID, page models.PageRequest) (models.Page[models.WebhookDelivery], error) {
	var rows []deliveryPageRow
	err := d.db.NewRaw(`WITH total AS (
			SELECT coalesce(sum(n), 0) AS n FROM webhook_delivery_counts WHERE subscription_id = ?0)
		SELECT s.id AS found, (SELECT n FROM total) AS total, d.*
		FROM webhook_subscriptions AS s
		LEFT JOIN webhook_deliveries AS d ON ?3 < (SELECT n FROM total) AND d.id = ANY(ARRAY(
			SELECT id FROM webhook_deliveries WHERE subscription_id = ?0
			ORDER BY date_created DESC, id DESC LIMIT ?2 OFFSET ?3))
		WHERE s.id = ?0 AND s.workspace_id = ?1
		ORDER BY d.date_created DESC, d.id DESC`,
		subscriptionID, workspaceID, page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.WebhookDelivery]{}, translate(err, nil)
	}
	if len(rows) == 0 {
		return models.Page[models.WebhookDelivery]{}, models.NotFound("webhook subscription")
	}
	total := rows[0].Total
	if rows[0].ID == uuid.Nil { // the subscription, with no record on this page
		rows = nil
	}
	return finishPage(ctx, page, rows, deliveryPageRow.delivery,
		func(context.Context) (int, error) { return total, nil })
}

// deliveryPageRow is a row of List: a record (zero on an empty page), the
// total, and the subscription's id (zero when not the workspace's).
type deliveryPageRow struct {
	deliveryRow
	windowCount
	Found uuid.UUID `bun:"found,scanonly"`
}

func (r deliveryPageRow) delivery() models.WebhookDelivery { return r.model() }

// DeleteOlderThan deletes up to limit records created before cutoff; callers
// loop in batches so no statement holds locks for long.
func (d Deliveries) DeleteOlderThan(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := d.db.NewRaw(`DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE date_created < ? LIMIT ?)`, cutoff, limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
