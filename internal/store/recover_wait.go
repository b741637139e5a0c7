package store

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// AttemptsSeen is one delivery a recovery redelivered (its event, to the
// recovery's subscription) and the attempts it had then.
type AttemptsSeen struct {
	EventID  uuid.UUID `json:"eventId"`
	Attempts int       `json:"attempts"`
}

// Unattempted counts the deliveries in seen to the subscription that have
// had no attempt since they were seen: their state's attempts are still
// at most the ones seen. A recovery polls it to hold its next page until
// this one's redeliveries are made. Deliveries that will never have one
// count as attempted, so the wait ends: one whose state is gone (its
// event expired), and every one when the subscription is disabled or
// deleted (their redeliveries are skipped). One statement, a primary-key
// lookup per delivery.
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
