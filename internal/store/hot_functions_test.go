package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// The statements every publish and every attempt make are functions that
// plan their lookups generically by their own setting (their planning cost
// as much as running them), while every other query of the session keeps
// the server's choice: a skewed query must not silently get a generic plan.
// One connection, so the session the test reads is theirs.
func TestHotStatementsPlanGenericallyByThemselves(t *testing.T) {
	db, st, ws := onePoolWorkspace(t)
	ctx := context.Background()
	sub, err := st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
		URL: "https://example.com", EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{"i":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Recipients) != 1 || ev.Recipients[0] != sub.ID || ev.DispatchedAt != nil {
			t.Fatalf("event %d: recipients %v, dispatchedAt %v; want [%s], pending", i, ev.Recipients, ev.DispatchedAt, sub.ID)
		}
		lease := store.SendLease{Key: store.SendKey(ev.ID, 1), MaxInFlight: 10, Duration: time.Minute}
		state, err := st.Deliveries().AttemptStateAcquire(ctx, sub.ID, ev.ID, 1, lease)
		if err != nil || state.Grant == nil || !state.Grant.OK || string(state.Event.Data) != `{"i": 1}` {
			t.Fatalf("attempt state %d: %+v, %v", i, state, err)
		}
		rec, err := st.Deliveries().RecordAttempt(ctx, models.WebhookDelivery{SubscriptionID: sub.ID, EventID: ev.ID, AttemptNumber: 1,
			Success: true, StatusCode: new(200), ResponseBody: "ok"}, store.RecordOptions{Lease: &lease.Key})
		if err != nil || !rec.Wrote {
			t.Fatalf("record %d: %+v, %v", i, rec, err)
		}
	}
	var session string
	if err := db.NewRaw("SHOW plan_cache_mode").Scan(ctx, &session); err != nil {
		t.Fatal(err)
	}
	if session != "auto" {
		t.Errorf("the session's plan_cache_mode = %q, want the server's auto", session)
	}
	var rows []struct {
		Name   string   `bun:"proname"`
		Config []string `bun:"proconfig,array"`
	}
	if err := db.NewRaw(`SELECT proname, coalesce(proconfig, '{}') AS proconfig FROM pg_proc
		WHERE proname IN ('event_create_v1', 'webhook_attempt_state_v1', 'webhook_record_attempt_v1',
			'webhook_send_acquire', 'webhook_delivery_counts_add')`).Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Errorf("found %d of the 5 hot functions: %+v", len(rows), rows)
	}
	for _, r := range rows {
		if !slices.Contains(r.Config, "plan_cache_mode=force_generic_plan") {
			t.Errorf("%s's own settings %v lack plan_cache_mode=force_generic_plan", r.Name, r.Config)
		}
	}
}

// In a transaction the statement runs on the transaction's connection: a
// rollback takes the event with it, and with the pool's one connection held
// by the transaction it still runs.
func TestHotStatementsJoinTheTransaction(t *testing.T) {
	_, st, ws := onePoolWorkspace(t)
	ctx := context.Background()
	var id uuid.UUID
	errRollback := errors.New("roll back")
	err := st.RunInTx(ctx, func(ctx context.Context, tx *store.Store) error {
		ev, err := tx.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		if err != nil {
			return err
		}
		id = ev.ID
		if _, err := tx.Events().Get(ctx, id); err != nil {
			t.Errorf("the transaction does not see its own event: %v", err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if _, err := st.Events().Get(ctx, id); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("after the rollback, the event: %v, want not found", err)
	}
}

// A migration that changes what the event insert returns (a column it
// returns changes type) does not fail the processes that ran it before,
// not even once in a transaction: a function's plans follow the schema
// (server-side prepared statements failed once per pooled connection).
func TestHotStatementsSurviveAResultTypeChange(t *testing.T) {
	db, st, ws := onePoolWorkspace(t)
	ctx := context.Background()
	publish := func(st *store.Store) error {
		_, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		return err
	}
	if err := publish(st); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE events ALTER COLUMN dispatched_at TYPE timestamp(3) with time zone`); err != nil {
		t.Fatal(err)
	}
	if err := publish(st); err != nil {
		t.Errorf("after the migration: %v", err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE events ALTER COLUMN dispatched_at TYPE timestamp(4) with time zone`); err != nil {
		t.Fatal(err)
	}
	if err := st.RunInTx(ctx, func(ctx context.Context, tx *store.Store) error { return publish(tx) }); err != nil {
		t.Errorf("the first transaction after the migration: %v", err)
	}
}

// onePoolWorkspace opens a store whose pool holds one connection (so the
// session a test reads is the statements') with a bootstrapped workspace.
func onePoolWorkspace(t *testing.T) (*bun.DB, *store.Store, store.Credentials) {
	t.Helper()
	db, err := store.Open(pgtest.NewURL(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := store.New(db)
	ws, err := st.Bootstrap(context.Background(), "P", "p-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return db, st, ws
}
