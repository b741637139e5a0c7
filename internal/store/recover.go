package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// RecoverCursor is where a recovery's walk through a subscription's failed
// deliveries stands: the last event it took, in (date created, id) order.
type RecoverCursor struct {
	EventDateCreated time.Time `json:"eventDateCreated"`
	EventID          uuid.UUID `json:"eventId"`
}

// FailedDelivery is a failed delivery's event and attempts made.
type FailedDelivery struct {
	models.Event
	Attempts int
}

// FailedPage returns up to limit events (without data) created in [since,
// until) whose delivery to the subscription failed, after the cursor, oldest
// first. It walks an index by keyset, so status changes shift no later page.
func (d Deliveries) FailedPage(ctx context.Context, workspaceID, subscriptionID uuid.UUID, since, until time.Time, after *RecoverCursor, limit int) ([]FailedDelivery, error) {
	// As in Events.List, bounds round up to date_created's microseconds.
	lo, hi := ceilMicro(&since), ceilMicro(&until)
	afterDate, afterID := *lo, uuid.Nil
	if after != nil {
		afterDate, afterID = after.EventDateCreated, after.EventID
	}
	var rows []struct {
		eventRow
		Attempts int `bun:"attempts"`
	}
	// (date, id) > (since, nil UUID) admits every event at since.
	err := d.db.NewRaw(`SELECT e.id, e.workspace_id, e.type, e.date_created, e.dispatched_at, e.recipients, st.attempts
		FROM webhook_delivery_states AS st
		JOIN events AS e ON e.id = st.event_id AND e.workspace_id = ?
		WHERE st.subscription_id = ? AND st.status = 'failed'
			AND st.event_date_created >= ? AND st.event_date_created < ?
			AND (st.event_date_created, st.event_id) > (?, ?)
		ORDER BY st.event_date_created, st.event_id
		LIMIT ?`, workspaceID, subscriptionID, *lo, *hi, afterDate, afterID, limit).Scan(ctx, &rows)
	if err != nil {
		return nil, translate(err, nil)
	}
	out := make([]FailedDelivery, len(rows))
	for i, r := range rows {
		out[i] = FailedDelivery{Event: r.model(), Attempts: r.Attempts}
	}
	return out, nil
}

// Delivered reports whether the event's delivery to the subscription left a
// state or record: for NULL recipients, whether it was one of them.
func (d Deliveries) Delivered(ctx context.Context, subscriptionID, eventID uuid.UUID) (bool, error) {
	var ok bool
	err := d.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM webhook_delivery_states WHERE event_id = ? AND subscription_id = ?)
		OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE subscription_id = ? AND event_id = ?)`,
		eventID, subscriptionID, subscriptionID, eventID).Scan(ctx, &ok)
	return ok, translate(err, nil)
}
