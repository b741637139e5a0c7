package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Unattempted counts the deliveries seen that have had no attempt since:
// attempts still at most the ones seen, for this subscription only.
// A delivery with no state (its event expired) is not waited for, nor is
// any once the subscription is disabled or deleted.
func TestDeliveriesUnattempted(t *testing.T) {
	f := newWebhookFixture(t)
	sub := f.create(t, f.ws, true, models.EventType("test.created")).ID
	other := f.create(t, f.ws, true, models.EventType("test.created")).ID
	now := time.Now()
	ev := make([]models.Event, 5)
	for i := range ev {
		ev[i] = f.publishAt(t, f.ws.WorkspaceID, "test.created", now)
	}
	f.state(t, ev[0], sub, "failed", 3, nil, nil)    // seen 3: not attempted
	f.state(t, ev[1], sub, "failed", 4, nil, nil)    // seen 3: attempted, failed again
	f.state(t, ev[2], sub, "succeeded", 4, nil, nil) // seen 3: attempted, delivered
	f.state(t, ev[3], sub, "failed", 0, nil, nil)    // seen 0 (skipped while disabled): not attempted
	f.state(t, ev[0], other, "failed", 9, nil, nil)  // another subscription's state of ev[0]
	seen := []store.AttemptsSeen{
		{EventID: ev[0].ID, Attempts: 3}, {EventID: ev[1].ID, Attempts: 3}, {EventID: ev[2].ID, Attempts: 3},
		{EventID: ev[3].ID, Attempts: 0}, {EventID: ev[4].ID, Attempts: 3}, // ev[4]: no state
		{EventID: uuid.New(), Attempts: 1}, // no such event
	}
	count := func(sub uuid.UUID, seen []store.AttemptsSeen) int {
		t.Helper()
		n, err := f.st.Deliveries().Unattempted(f.ctx, sub, seen)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(sub, seen); n != 2 {
		t.Fatalf("%d unattempted, want 2 (ev[0] and ev[3])", n)
	}
	f.exec(t, `UPDATE webhook_delivery_states SET attempts = 1 WHERE event_id = ? AND subscription_id = ?`, ev[3].ID, sub)
	if n := count(sub, seen); n != 1 {
		t.Fatalf("%d unattempted after ev[3]'s attempt, want 1", n)
	}
	if n := count(sub, nil); n != 0 {
		t.Fatalf("%d unattempted of none", n)
	}
	f.exec(t, `UPDATE webhook_subscriptions SET enabled = false WHERE id = ?`, sub)
	if n := count(sub, seen); n != 0 {
		t.Fatalf("%d unattempted of a disabled subscription, want 0", n)
	}
	f.exec(t, `UPDATE webhook_subscriptions SET enabled = true WHERE id = ?`, sub)
	f.exec(t, `DELETE FROM webhook_subscriptions WHERE id = ?`, sub)
	if n := count(sub, seen); n != 0 {
		t.Fatalf("%d unattempted of a deleted subscription, want 0", n)
	}
}
