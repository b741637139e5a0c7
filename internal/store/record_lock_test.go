package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// An attempt's record and its subscription's deletion never deadlock: the
// record statement takes the subscription first, as the deletion does.
// Here the record waits for the send-limits row (an acquire holds it)
// when the deletion starts; before lk, the record held its state row by
// then and took the subscription last (its foreign-key check), the
// deletion held the subscription and waited for the state row, and
// PostgreSQL cancelled one of them (40P01).
func TestRecordAttemptAndDeletionDoNotDeadlock(t *testing.T) {
	f := newSendFixture(t)
	var ws uuid.UUID
	if err := f.a.DB().QueryRowContext(f.ctx, `SELECT workspace_id FROM webhook_subscriptions WHERE id = ?`, f.sub).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	ev, err := f.a.Events().Create(f.ctx, models.NewEvent{WorkspaceID: ws, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	lease := uuid.New()
	if g := f.acquire(t, f.a, f.sub, lease, 10, time.Minute); !g.OK {
		t.Fatalf("acquire: %+v", g)
	}
	// Another replica's acquire holds the send-limits row.
	tx, err := f.b.DB().BeginTx(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	if _, err := tx.ExecContext(f.ctx, `SELECT 1 FROM webhook_send_limits WHERE subscription_id = ? FOR UPDATE`, f.sub); err != nil {
		t.Fatal(err)
	}

	recorded := make(chan error, 1)
	go func() {
		// A success on a healthy subscription, the usual case: its health
		// does not change, so nothing else locks the subscription.
		code := 204
		_, err := f.a.Deliveries().RecordAttempt(f.ctx, models.WebhookDelivery{
			SubscriptionID: f.sub, EventID: ev.ID, AttemptNumber: 1, Success: true, StatusCode: &code,
		}, store.RecordOptions{Lease: &lease})
		recorded <- err
	}()
	time.Sleep(300 * time.Millisecond) // the record now waits for the row
	deleted := make(chan error, 1)
	go func() {
		_, err := f.b.DB().ExecContext(f.ctx, `DELETE FROM webhook_subscriptions WHERE id = ?`, f.sub)
		deleted <- err
	}()
	time.Sleep(300 * time.Millisecond) // the deletion now waits too
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	for what, ch := range map[string]chan error{"record": recorded, "deletion": deleted} {
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("%s: %v", what, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s still waiting", what)
		}
	}
}
