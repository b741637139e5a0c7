package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// The quiet lane claims test events, then every pending event of each
// workspace with few undispatched, and passes over a workspace with a
// backlog, leased events counted in it, until the backlog is down to a
// quiet workspace's few.
func TestEventsClaimQuietPassesOverBacklogs(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	a := f.pending(t, f.ws.WorkspaceID, 50, t0)
	test := f.pendingOf(t, f.ws.WorkspaceID, models.EventWebhookTest, 1, t0.Add(time.Minute))
	b := f.pending(t, f.other.WorkspaceID, 2, t0.Add(2*time.Minute))
	got, err := f.st.Events().ClaimQuiet(f.ctx, 8, 8, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uuid.UUID{test[0], b[0], b[1]}; !slices.Equal(claimOrder(got), want) {
		t.Fatalf("claimed %v\nwant     %v (the test event, then the quiet workspace's, oldest first)", claimOrder(got), want)
	}
	if again, err := f.st.Events().ClaimQuiet(f.ctx, 8, 8, time.Minute, nil); err != nil || len(again) != 0 {
		t.Fatalf("claimed again: %d events (%v), want none: the rest is a backlog", len(again), err)
	}
	// The test event and 42 of A's started, 8 left, one of them leased by
	// the main claims: counted, so quiet only from 8.
	if err := f.st.Events().MarkManyDispatched(f.ctx, append([]uuid.UUID{test[0]}, a[:42]...)); err != nil {
		t.Fatal(err)
	}
	leased, err := f.st.Events().ClaimUndispatched(f.ctx, 1, time.Minute, nil)
	if err != nil || len(leased) != 1 {
		t.Fatalf("lease one of A's: %d (%v)", len(leased), err)
	}
	if got, err := f.st.Events().ClaimQuiet(f.ctx, 8, 7, time.Minute, nil); err != nil || len(got) != 0 {
		t.Fatalf("with 8 undispatched, one leased, and quiet meaning 7: %d claimed (%v), want none", len(got), err)
	}
	got, err = f.st.Events().ClaimQuiet(f.ctx, 8, 8, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := a[43:]; !slices.Equal(claimOrder(got), want) {
		t.Fatalf("with 8 undispatched and quiet meaning 8: claimed %d, want A's 7 not leased, oldest first", len(got))
	}
}

// Quiet workspaces take turns: each claim goes on after the last workspace
// the lane's previous claim served.
func TestEventsClaimQuietRotates(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	var ws []uuid.UUID
	byWS := map[uuid.UUID][]uuid.UUID{}
	for i := range 4 {
		creds, err := f.st.Bootstrap(f.ctx, "Quiet", "quiet-"+uuid.NewString()[:8]+"@example.com")
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, creds.WorkspaceID)
		byWS[creds.WorkspaceID] = f.pending(t, creds.WorkspaceID, 2, t0.Add(time.Duration(i)*time.Minute))
	}
	slices.SortFunc(ws, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	turns := new(store.ClaimTurns)
	for i, w := range ws {
		got, err := f.st.Events().ClaimQuiet(f.ctx, 2, 8, time.Minute, turns)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(claimOrder(got), byWS[w]) {
			t.Fatalf("claim %d: %v, want workspace %d's two events %v", i, claimOrder(got), i, byWS[w])
		}
	}
}

// A quiet claim walks at most QuietWalk workspaces with events pending, so
// behind many backlogs its cost stays bounded; a quiet workspace past them
// waits for the claimers' turns, or for the lane's cursor to come near.
func TestEventsClaimQuietWalkIsBounded(t *testing.T) {
	f := newWebhookFixture(t)
	// QuietWalk + 10 backlogs of 9, then a quiet workspace last in id order.
	if _, err := f.st.DB().ExecContext(f.ctx, `INSERT INTO workspaces (id, name)
		SELECT gen_random_uuid(), 'busy' || g FROM generate_series(1, ?) g`, store.QuietWalk+10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DB().ExecContext(f.ctx, `INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), w.id, 'test.created', '{}'::jsonb, now() - g * interval '1 s', ARRAY[gen_random_uuid()]
		FROM workspaces w, generate_series(1, 9) g WHERE w.name LIKE 'busy%'`); err != nil {
		t.Fatal(err)
	}
	last := uuid.MustParse("ffffffff-ffff-4fff-bfff-ffffffffffff")
	if _, err := f.st.DB().ExecContext(f.ctx, `INSERT INTO workspaces (id, name) VALUES (?, 'quiet')`, last); err != nil {
		t.Fatal(err)
	}
	q := f.pending(t, last, 1, time.Now().Add(-time.Hour))
	began := time.Now()
	got, err := f.st.Events().ClaimQuiet(f.ctx, 8, 8, time.Minute, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("from the lowest id: %d claimed (%v), want none: the quiet workspace is past the walk's bound", len(got), err)
	}
	t.Logf("a quiet claim past %d backlogs took %v", store.QuietWalk, time.Since(began))
	var before uuid.UUID
	if err := f.st.DB().NewRaw(`SELECT id FROM workspaces WHERE id < ? ORDER BY id DESC LIMIT 1`, last).Scan(f.ctx, &before); err != nil {
		t.Fatal(err)
	}
	turns := new(store.ClaimTurns)
	store.SetClaimTurns(turns, before)
	got, err = f.st.Events().ClaimQuiet(f.ctx, 8, 8, time.Minute, turns)
	if err != nil || !slices.Equal(claimOrder(got), q) {
		t.Fatalf("from just before it: claimed %v (%v), want its event", claimOrder(got), err)
	}
}
