package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// ListFiltered is List narrowed by outcome and/or event; its total is
// counted only when the page cannot tell it.
func (d Deliveries) ListFiltered(ctx context.Context, workspaceID, subscriptionID uuid.UUID, f models.DeliveryFilter, page models.PageRequest) (models.Page[models.WebhookDelivery], error) {
	if f.Empty() {
		return d.List(ctx, workspaceID, subscriptionID, page)
	}
	where := `subscription_id = ?0`
	var success bool
	if f.Success != nil {
		success = *f.Success
		where += ` AND success = ?4`
	}
	var eventID uuid.UUID
	if f.EventID != nil {
		eventID = *f.EventID
		where += ` AND event_id = ?5`
	}
	args := []any{subscriptionID, workspaceID, page.PerPage, page.Offset(), success, eventID}
	var rows []deliveryPageRow
	err := d.db.NewRaw(`SELECT s.id AS found, d.*
		FROM webhook_subscriptions AS s
		LEFT JOIN webhook_deliveries AS d ON d.id = ANY(ARRAY(
			SELECT id FROM webhook_deliveries WHERE `+where+`
			ORDER BY date_created DESC, id DESC LIMIT ?2 OFFSET ?3))
		WHERE s.id = ?0 AND s.workspace_id = ?1
		ORDER BY d.date_created DESC, d.id DESC`, args...).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.WebhookDelivery]{}, translate(err, nil)
	}
	if len(rows) == 0 {
		return models.Page[models.WebhookDelivery]{}, models.NotFound("webhook subscription")
	}
	if rows[0].ID == uuid.Nil { // the subscription, with no record on this page
		rows = nil
	}
	return pageWithTotal(ctx, page, rows, deliveryPageRow.delivery, func(ctx context.Context) (int, error) {
		var n int
		err := d.db.NewRaw(`SELECT count(*) FROM webhook_deliveries WHERE `+where, args...).Scan(ctx, &n)
		return n, err
	})
}
