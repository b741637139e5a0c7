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

// Record writes the record of one attempt unless one already exists for the
// same subscription, event and attempt number (an activity that ran twice).
// It returns the stored record, and whether this call wrote it. A
// subscription deleted meanwhile is models.ErrNotFound.
func (d Deliveries) Record(ctx context.Context, in models.WebhookDelivery) (models.WebhookDelivery, bool, error) {
	row := deliveryRow{
		ID: uuid.New(), SubscriptionID: in.SubscriptionID, EventID: in.EventID,
		AttemptNumber: in.AttemptNumber, Success: in.Success, StatusCode: in.StatusCode,
		ResponseBody: in.ResponseBody, ResponseTimeMs: in.ResponseTimeMs, ErrorMessage: in.ErrorMessage,
		DateCreated: pgTime(in.DateCreated),
	}
	if row.DateCreated.IsZero() {
		row.DateCreated = pgTime(time.Now())
	}
	res, err := d.db.NewInsert().Model(&row).
		On("CONFLICT (subscription_id, event_id, attempt_number) DO NOTHING").Exec(ctx)
	if err != nil {
		return models.WebhookDelivery{}, false, translate(err, nil)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		existing, err := d.Find(ctx, in.SubscriptionID, in.EventID, in.AttemptNumber)
		return existing, false, err
	}
	return row.model(), true, nil
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

// List returns one page of a subscription's records, newest first. The
// subscription must belong to the workspace.
func (d Deliveries) List(ctx context.Context, workspaceID, subscriptionID uuid.UUID, page models.PageRequest) (models.Page[models.WebhookDelivery], error) {
	exists, err := d.db.NewSelect().TableExpr("webhook_subscriptions").
		Where("id = ? AND workspace_id = ?", subscriptionID, workspaceID).Exists(ctx)
	if err != nil {
		return models.Page[models.WebhookDelivery]{}, translate(err, nil)
	}
	if !exists {
		return models.Page[models.WebhookDelivery]{}, models.NotFound("webhook subscription")
	}
	var rows []deliveryPageRow
	err = d.db.NewRaw(`SELECT *, count(*) OVER () AS total FROM webhook_deliveries
		WHERE subscription_id = ? ORDER BY date_created DESC, id DESC LIMIT ? OFFSET ?`,
		subscriptionID, page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.WebhookDelivery]{}, translate(err, nil)
	}
	return finishPage(ctx, page, rows, deliveryPageRow.delivery,
		d.db.NewSelect().TableExpr("webhook_deliveries").Where("subscription_id = ?", subscriptionID).Count)
}

type deliveryPageRow struct {
	deliveryRow
	windowCount
}

func (r deliveryPageRow) delivery() models.WebhookDelivery { return r.model() }

// DeleteOlderThan deletes up to limit records created before the cutoff and
// reports how many; callers loop until it returns fewer than limit, so no
// single statement holds locks for long.
func (d Deliveries) DeleteOlderThan(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := d.db.NewRaw(`DELETE FROM webhook_deliveries WHERE id IN (
			SELECT id FROM webhook_deliveries WHERE date_created < ? LIMIT ?)`, cutoff, limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
