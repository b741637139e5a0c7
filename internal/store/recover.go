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

// FailedDelivery is a failed delivery FailedPage found: its event and the
// attempts made (the state's attempts, the highest attempt number
// recorded).
type FailedDelivery struct {
	models.Event
	Attempts int
}

// FailedPage returns up to limit events of a workspace's subscription
// whose delivery to it has failed (webhook_delivery_states status
// 'failed'), created in [since, until), after the cursor (nil: from
// since), oldest first. It is one range of the index (subscription_id,
// status, event_date_created, event_id), walked by keyset rather than
// offset, so a page costs the same however far the walk is and rows that
// change status meanwhile shift no later page. The events come without
// their data: redelivering needs their identity, type and recipients only.
// Each comes with its attempts, which a recovery names in its redelivery
// and waits to see pass.
func (d Deliveries) FailedPage(ctx context.Context, workspaceID, subscriptionID uuid.UUID, since, until time.Time, after *RecoverCursor, limit int) ([]FailedDelivery, error) {
	// As Events.List: date_created holds microseconds, so the bounds are
	// rounded up to keep "since inclusive, until exclusive" exact.
	lo, hi := ceilMicro(&since), ceilMicro(&until)
	afterDate, afterID := *lo, uuid.Nil
	if after != nil {
		afterDate, afterID = after.EventDateCreated, after.EventID
	}
	var rows []struct {
		eventRow
		Attempts int `bun:"attempts"`
	}
	// (date, id) > (since, nil UUID) admits every event at since, whose
	// ids are all above the nil UUID.
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

// Delivered reports whether the event's delivery to the subscription left
// a trace: a delivery state or an attempt's record. It tells an event
// stored before recipients were fixed at acceptance (recipients NULL)
// whether the subscription was one of them.
func (d Deliveries) Delivered(ctx context.Context, subscriptionID, eventID uuid.UUID) (bool, error) {
	var ok bool
	err := d.db.NewRaw(`SELECT EXISTS (SELECT 1 FROM webhook_delivery_states WHERE event_id = ? AND subscription_id = ?)
		OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE subscription_id = ? AND event_id = ?)`,
		eventID, subscriptionID, subscriptionID, eventID).Scan(ctx, &ok)
	return ok, translate(err, nil)
}
