package store

import (
	"context"

	"github.com/google/uuid"
)

// AttemptsMade is the highest attempt number recorded for an event's
// delivery to a subscription (0 when none).
func (d Deliveries) AttemptsMade(ctx context.Context, subscriptionID, eventID uuid.UUID) (int, error) {
	var n int
	err := d.db.NewRaw(`SELECT coalesce(max(attempt_number), 0) FROM webhook_deliveries
		WHERE subscription_id = ? AND event_id = ?`, subscriptionID, eventID).Scan(ctx, &n)
	return n, translate(err, nil)
}
