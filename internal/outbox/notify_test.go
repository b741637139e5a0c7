package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/outbox"
	"github.com/openlayer-ai/workspace-service/internal/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Storing an event that waits for its workflow wakes the dispatcher at
// once; an event stored dispatched (no subscription takes it) does not.
func TestListenWakesOnUndispatchedEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.NewDB(t)
	st := store.New(db)
	ws, err := st.Bootstrap(ctx, "Notify", "notify@example.com")
	if err != nil {
		t.Fatal(err)
	}
	wake := outbox.Listen(ctx, db)
	// LISTEN runs on its own connection; wait until it is in place.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener never ran LISTEN")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// No subscription takes it: stored dispatched, no wake-up.
	ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: "test.created", Data: []byte(`{}`)})
	if err != nil || ev.DispatchedAt == nil {
		t.Fatalf("event without recipients: %+v, %v: want stored dispatched", ev, err)
	}
	select {
	case <-wake:
		t.Fatal("an event stored dispatched woke the dispatcher")
	case <-time.After(300 * time.Millisecond):
	}

	// Waiting for its workflow: a wake-up, folded into one for a burst.
	_, err = db.NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, 'test.created', '{}'::jsonb, now(), ARRAY[gen_random_uuid()]
		FROM generate_series(1, 50)`, ws.WorkspaceID).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
	case <-time.After(2 * time.Second):
		t.Fatal("storing undispatched events did not wake the dispatcher")
	}
	select {
	case <-wake:
		t.Fatal("one transaction of 50 events woke the dispatcher twice")
	case <-time.After(300 * time.Millisecond):
	}

	cancel()
	select {
	case _, ok := <-wake:
		if ok {
			t.Fatal("a wake-up after the context ended")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the wake channel did not close when the context ended")
	}
}
