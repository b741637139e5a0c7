package store_test

import (
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// The backlog counts undispatched events only, saturates at its limit,
// and ages the oldest by the database's clock; dispatching empties it.
func TestEventsBacklog(t *testing.T) {
	f := newWebhookFixture(t)
	events := f.st.Events()
	if b, err := events.Backlog(f.ctx, 10); err != nil || b.Undispatched != 0 || b.OldestAge != 0 {
		t.Fatalf("empty outbox: %+v, %v; want nothing", b, err)
	}
	// No recipient: stored dispatched, not part of the backlog.
	if _, err := events.Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestUpdated, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	// Three waiting events, the oldest stored 90 s ago.
	_, err := f.st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, 'test.updated', '{}'::jsonb, now() - make_interval(secs => s), ARRAY[gen_random_uuid()]
		FROM unnest(ARRAY[90, 30, 5]) s`, f.ws.WorkspaceID).Exec(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := events.Backlog(f.ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b.Undispatched != 3 || b.OldestAge < 90*time.Second || b.OldestAge > 100*time.Second {
		t.Fatalf("backlog %+v; want 3 events, the oldest 90 s old", b)
	}
	if b, err := events.Backlog(f.ctx, 2); err != nil || b.Undispatched != 2 {
		t.Fatalf("limit 2: %+v, %v; want the count to stop at 2", b, err)
	}

	// An event stamped ahead of the database's clock (a skewed API host)
	// ages as 0, never negative.
	if _, err := f.st.DB().NewRaw(`UPDATE events SET dispatched_at = now() WHERE dispatched_at IS NULL`).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		VALUES (gen_random_uuid(), ?, 'test.updated', '{}'::jsonb, now() + interval '1 minute', ARRAY[gen_random_uuid()])`,
		f.ws.WorkspaceID).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := events.Backlog(f.ctx, 10); err != nil || b.Undispatched != 1 || b.OldestAge != 0 {
		t.Fatalf("event from the future: %+v, %v; want 1 event aged 0", b, err)
	}
}
