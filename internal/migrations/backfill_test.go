package migrations_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Deliveries recorded before delivery states were kept get their states
// from the backfill migration (…120): succeeded if any attempt did, else
// failed, with the highest attempt number and the last status code; a
// state already there is left alone.
func TestDeliveryStatesBackfill(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, pgtest.NewEmptyURL(t))
	if _, err := migrations.Apply(ctx, db); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	ws, err := st.Bootstrap(ctx, "Acme", "ops@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
	}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	event := func() uuid.UUID {
		ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	record := func(ev uuid.UUID, n, code int) {
		if _, err := st.Deliveries().RecordAttempt(ctx, models.WebhookDelivery{
			SubscriptionID: sub.ID, EventID: ev, AttemptNumber: n, Success: code < 300, StatusCode: &code,
		}, store.RecordOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	failed, succeeded, kept := event(), event(), event()
	record(failed, 1, 500)
	record(failed, 2, 503)
	record(succeeded, 1, 500)
	record(succeeded, 2, 204)
	record(kept, 1, 500)
	// As before migration …100 kept states: only kept's stays, marked so
	// the backfill can be seen to leave it alone.
	if _, err := db.ExecContext(ctx, `DELETE FROM webhook_delivery_states WHERE event_id IN (?, ?)`, failed, succeeded); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE webhook_delivery_states SET status = 'pending' WHERE event_id = ?`, kept); err != nil {
		t.Fatal(err)
	}
	// Run the backfill again, as the deploy does.
	if _, err := db.ExecContext(ctx, `DELETE FROM bun_migrations WHERE name = '20261123000120'`); err != nil {
		t.Fatal(err)
	}
	if res, err := migrations.Apply(ctx, db); err != nil || len(res.Applied) != 1 {
		t.Fatalf("applied %v, %v; want the backfill", res.Applied, err)
	}

	type state struct {
		Status   string `bun:"status"`
		Attempts int    `bun:"attempts"`
		Code     *int   `bun:"last_status_code"`
	}
	for ev, want := range map[uuid.UUID]state{
		failed:    {"failed", 2, new(503)},
		succeeded: {"succeeded", 2, new(204)},
		kept:      {"pending", 1, new(500)},
	} {
		var got state
		if err := db.NewRaw(`SELECT status, attempts, last_status_code FROM webhook_delivery_states
			WHERE event_id = ? AND subscription_id = ?`, ev, sub.ID).Scan(ctx, &got); err != nil {
			t.Fatalf("state of %s: %v", ev, err)
		}
		if got.Status != want.Status || got.Attempts != want.Attempts || got.Code == nil || *got.Code != *want.Code {
			t.Errorf("state of %s: %+v (code %v), want %+v (code %v)", ev, got, got.Code, want, *want.Code)
		}
	}
}
