package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// The statements every publish and every attempt make run prepared: parsed
// once per connection, not on every call (their planning cost as much as
// running them). One connection, so the session the test reads is theirs.
func TestHotStatementsArePrepared(t *testing.T) {
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
	var prepared []string
	if err := db.NewRaw(`SELECT statement FROM pg_prepared_statements ORDER BY statement`).Scan(ctx, &prepared); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"INSERT INTO events": false, "WITH lk AS": false, "webhook_send_acquire": false}
	for _, s := range prepared {
		for w := range want {
			if strings.Contains(s, w) {
				want[w] = true
			}
		}
	}
	for w, ok := range want {
		if !ok {
			t.Errorf("no prepared statement holds %q; prepared: %d statements", w, len(prepared))
		}
	}
}

// In a transaction the statement runs on the transaction's connection: a
// rollback takes the event with it. With the pool's one connection held by
// the transaction, a statement not prepared yet still runs (preparing it
// on the pool first would wait forever for a second connection).
func TestPreparedStatementsJoinTheTransaction(t *testing.T) {
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

// A migration that changes what a prepared statement returns (here a
// column the event insert returns changes type) does not wedge the
// processes that prepared it before: the statement is prepared anew.
func TestPreparedStatementSurvivesAResultTypeChange(t *testing.T) {
	db, st, ws := onePoolWorkspace(t)
	ctx := context.Background()
	publish := func() error {
		_, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		return err
	}
	if err := publish(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE events ALTER COLUMN dispatched_at TYPE timestamp(3) with time zone`); err != nil {
		t.Fatal(err)
	}
	if err := publish(); err != nil {
		t.Errorf("after the migration: %v", err)
	}
	// In a transaction the first try fails with the transaction; the
	// next one prepares anew.
	if _, err := db.ExecContext(ctx, `ALTER TABLE events ALTER COLUMN dispatched_at TYPE timestamp(4) with time zone`); err != nil {
		t.Fatal(err)
	}
	inTx := func() error {
		return st.RunInTx(ctx, func(ctx context.Context, tx *store.Store) error {
			_, err := tx.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
			return err
		})
	}
	_ = inTx()
	if err := inTx(); err != nil {
		t.Errorf("a transaction after the migration's first: %v", err)
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
