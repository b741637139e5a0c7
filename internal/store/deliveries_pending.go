package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// pendingWhere selects a subscription's pending deliveries: delivery
// states still pending, and events that name it as a recipient but whose
// delivery has not started (no state yet; the outbox drains them in
// moments, through the partial index on undispatched events).
const pendingWhere = `
	SELECT st.event_id, st.event_date_created, st.attempts, st.last_status_code,
		coalesce(st.next_attempt_at, st.date_updated) AS next_attempt_at
	FROM webhook_delivery_states AS st
	WHERE st.subscription_id = ?0 AND st.status = 'pending' AND (?4::uuid IS NULL OR st.event_id = ?4)
	UNION ALL
	SELECT e.id, e.date_created, 0, NULL, e.date_created
	FROM events AS e
	WHERE e.workspace_id = ?1 AND e.dispatched_at IS NULL AND ?0 = ANY(e.recipients)
		AND (?4::uuid IS NULL OR e.id = ?4)
		AND NOT EXISTS (SELECT 1 FROM webhook_delivery_states WHERE event_id = e.id AND subscription_id = ?0)`

// Pending returns one page of the subscription's pending deliveries,
// newest event first, optionally for one event. The caller has checked
// that the subscription is the workspace's.
func (d Deliveries) Pending(ctx context.Context, workspaceID, subscriptionID uuid.UUID, eventID *uuid.UUID, page models.PageRequest) (models.Page[models.PendingDelivery], error) {
	args := []any{subscriptionID, workspaceID, page.PerPage, page.Offset(), eventID}
	var rows []struct {
		EventID          uuid.UUID  `bun:"event_id"`
		EventDateCreated time.Time  `bun:"event_date_created"`
		Attempts         int        `bun:"attempts"`
		LastStatusCode   *int       `bun:"last_status_code"`
		NextAttemptAt    *time.Time `bun:"next_attempt_at"`
	}
	err := d.db.NewRaw(`SELECT * FROM (`+pendingWhere+`) AS p
		ORDER BY event_date_created DESC, event_id DESC LIMIT ?2 OFFSET ?3`, args...).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.PendingDelivery]{}, translate(err, nil)
	}
	var total int
	if err := d.db.NewRaw(`SELECT count(*) FROM (`+pendingWhere+`) AS p`, args...).Scan(ctx, &total); err != nil {
		return models.Page[models.PendingDelivery]{}, translate(err, nil)
	}
	items := make([]models.PendingDelivery, len(rows))
	for i, r := range rows {
		items[i] = models.PendingDelivery{EventID: r.EventID, EventDateCreated: r.EventDateCreated,
			Attempts: r.Attempts, LastStatusCode: r.LastStatusCode, NextAttemptAt: r.NextAttemptAt}
	}
	return models.NewPage(page, total, items), nil
}
