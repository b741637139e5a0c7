package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// An attempt's record whose statement PostgreSQL ends as a deadlock's
// victim is recorded by running it again, not failed (the activity's
// retry would send the attempt to the receiver again). Here another
// transaction holds the subscription's record counter slots, which the
// record takes last, and then wants this attempt's record.
func TestRecordAttemptRetriesADeadlock(t *testing.T) {
	f := newWebhookFixture(t)
	sub := f.create(t, f.ws, true, models.EventTestCreated)
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// One earlier record makes the subscription's counter slots exist.
	if _, err := f.st.Deliveries().RecordAttempt(f.ctx, models.WebhookDelivery{SubscriptionID: sub.ID, EventID: ev.ID,
		AttemptNumber: 1, Success: false}, store.RecordOptions{}); err != nil {
		t.Fatal(err)
	}
	for slot := range 16 {
		if _, err := f.st.DB().NewRaw(`INSERT INTO webhook_delivery_counts (subscription_id, slot, n) VALUES (?, ?, 0)
			ON CONFLICT DO NOTHING`, sub.ID, slot).Exec(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := f.st.DB().BeginTx(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.NewRaw(`SELECT 1 FROM webhook_delivery_counts WHERE subscription_id = ? FOR UPDATE`, sub.ID).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		rec, err := f.st.Deliveries().RecordAttempt(context.Background(), models.WebhookDelivery{SubscriptionID: sub.ID,
			EventID: ev.ID, AttemptNumber: 2, Success: true, StatusCode: new(200)}, store.RecordOptions{})
		if err == nil && rec.Delivery.AttemptNumber != 2 {
			t.Errorf("recorded %+v", rec.Delivery)
		}
		done <- err
	}()
	// Once the record waits for a counter slot, want the record too: the
	// record's statement, waiting first, detects the cycle and is ended.
	time.Sleep(300 * time.Millisecond)
	if _, err := tx.NewRaw(`INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success)
		VALUES (?, ?, ?, 2, false) ON CONFLICT DO NOTHING`, uuid.New(), sub.ID, ev.ID).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RecordAttempt after a deadlock: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("RecordAttempt did not return")
	}
}
