package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
)

// A poke wakes the dispatcher; pokes made while one notification is in
// flight fold into at most one more; storing an event alone notifies
// nobody (no NOTIFY inside the publish's transaction, whose commit it
// would serialise with every other publish); the wake channel closes with
// the context.
func TestNotifierWakesListener(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.NewDB(t)
	st := store.New(db)
	ws, err := st.Bootstrap(ctx, "Notify", "notify@example.com")
	if err != nil {
		t.Fatal(err)
	}
	wakes := outbox.Listen(ctx, db)
	wake, keys := wakes[store.OutboxEvents], wakes[store.OutboxAPIKeys]
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
	quiet := func(what string) {
		t.Helper()
		select {
		case <-wake:
			t.Fatal(what)
		case <-time.After(300 * time.Millisecond):
		}
	}

	// Stored without a poke: no wake-up (the dispatcher's sweep finds it).
	_, err = db.NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, 'test.created', '{}'::jsonb, now(), ARRAY[gen_random_uuid()]
		FROM generate_series(1, 3)`, ws.WorkspaceID).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: ws.WorkspaceID, Type: "test.created", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	quiet("storing events notified by itself")

	n := store.NewNotifier(db, nil)
	nctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { n.Run(nctx); close(done) }()
	for range 50 {
		n.Poke(store.OutboxEvents)
	}
	select {
	case <-wake:
	case <-time.After(2 * time.Second):
		t.Fatal("a poke did not wake the dispatcher")
	}
	// 50 pokes: one notification in flight and at most one pending.
	select {
	case <-wake:
	case <-time.After(300 * time.Millisecond):
	}
	quiet("50 pokes woke the dispatcher more than twice")
	select {
	case <-keys:
		t.Fatal("pokes of the events outbox woke the api keys' relay")
	default:
	}
	n.Poke(store.OutboxAPIKeys)
	select {
	case <-keys:
	case <-time.After(2 * time.Second):
		t.Fatal("a poke of the api keys outbox did not wake its relay")
	}
	// A notification naming no outbox (sent by hand) wakes every relay.
	if _, err := db.ExecContext(ctx, `SELECT pg_notify('outbox', '')`); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]<-chan struct{}{"events": wake, "api keys": keys, "webhook secrets": wakes[store.OutboxWebhookSecrets]} {
		select {
		case <-w:
		case <-time.After(2 * time.Second):
			t.Fatalf("a notification naming no outbox did not wake the %s relay", name)
		}
	}
	stop()
	<-done

	var nilNotifier *store.Notifier
	nilNotifier.Poke(store.OutboxEvents) // a nil Notifier is a no-op

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
