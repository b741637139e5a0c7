package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// AttemptsSeen is a redelivered event and the attempts it had then.
type AttemptsSeen struct {
	EventID  uuid.UUID `json:"eventId"`
	Attempts int       `json:"attempts"`
}

// Unattempted counts the deliveries in seen with no attempt since; a recovery
// holds its next page until it is zero. Those never to be attempted (state
// gone, subscription disabled or deleted) count as attempted.
func (d Deliveries) Unattempted(ctx context.Context, subscriptionID uuid.UUID, seen []AttemptsSeen) (int, error) {
	if len(seen) == 0 {
		return 0, nil
	}
	ids, attempts := make([]uuid.UUID, len(seen)), make([]int64, len(seen))
	for i, s := range seen {
		ids[i], attempts[i] = s.EventID, int64(s.Attempts)
	}
	var n int
	err := d.db.NewRaw(`SELECT count(*)
		FROM unnest(?::uuid[], ?::int[]) AS s (event_id, attempts)
		JOIN webhook_delivery_states AS st ON st.event_id = s.event_id AND st.subscription_id = ?
		WHERE st.attempts <= s.attempts
			AND EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ? AND enabled)`,
		pgdialect.Array(ids), pgdialect.Array(attempts), subscriptionID, subscriptionID).Scan(ctx, &n)
	return n, translate(err, nil)
}
