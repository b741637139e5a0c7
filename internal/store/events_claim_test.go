package store_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// pending stores n undispatched events of workspace ws, created 1 ms apart
// from first, and returns their ids oldest first.
func (f *webhookFixture) pending(t *testing.T, ws uuid.UUID, n int, first time.Time) []uuid.UUID {
	t.Helper()
	return f.pendingOf(t, ws, models.EventTestCreated, n, first)
}

// pendingOf is pending with events of type typ.
func (f *webhookFixture) pendingOf(t *testing.T, ws uuid.UUID, typ models.EventType, n int, first time.Time) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	err := f.st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, ?, '{}'::jsonb, ?::timestamptz + g * interval '1 millisecond', ARRAY[gen_random_uuid()]
		FROM generate_series(1, ?) g
		RETURNING id`, ws, typ, first, n).Scan(f.ctx, &ids)
	if err != nil {
		t.Fatal(err)
	}
	// RETURNING follows the series here, but the test must not rely on it.
	var sorted []uuid.UUID
	if err := f.st.DB().NewRaw(`SELECT id FROM events WHERE id IN (?) ORDER BY date_created`, bun.List(ids)).Scan(f.ctx, &sorted); err != nil {
		t.Fatal(err)
	}
	return sorted
}

func claimOrder(evs []models.Event) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	return ids
}

// ofWorkspace keeps the claimed events of ws, in the claim's order.
func ofWorkspace(evs []models.Event, ws uuid.UUID) []uuid.UUID {
	var ids []uuid.UUID
	for _, ev := range evs {
		if ev.WorkspaceID == ws {
			ids = append(ids, ev.ID)
		}
	}
	return ids
}

// A burst in one workspace does not hold back another's events: a claim
// takes every workspace's oldest in turns, and fills the batch from the
// workspace that has more.
func TestEventsClaimFairAcrossWorkspaces(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	a := f.pending(t, f.ws.WorkspaceID, 600, t0)
	b := f.pending(t, f.other.WorkspaceID, 3, t0.Add(time.Minute)) // after all of a's

	got, err := f.st.Events().ClaimUndispatched(f.ctx, 500, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 500 {
		t.Fatalf("claimed %d, want the limit, 500", len(got))
	}
	if gb := ofWorkspace(got, f.other.WorkspaceID); !slices.Equal(gb, b) {
		t.Fatalf("claimed %d of the other workspace's 3 events behind a backlog of 600", len(gb))
	}
	if ga := ofWorkspace(got, f.ws.WorkspaceID); !slices.Equal(ga, a[:497]) {
		t.Fatal("the busy workspace's share is not its 497 oldest, oldest first")
	}
	// Turns: each workspace's first, then each one's second, and so on,
	// the workspaces in order of id (a claim with no rotation behind it).
	want := []uuid.UUID{a[0], b[0], a[1], b[1], a[2], b[2], a[3], a[4]}
	if idLess(f.other.WorkspaceID, f.ws.WorkspaceID) {
		want = []uuid.UUID{b[0], a[0], b[1], a[1], b[2], a[2], a[3], a[4]}
	}
	if head := claimOrder(got)[:len(want)]; !slices.Equal(head, want) {
		t.Fatalf("claim order starts %v, want %v (by turn, then by workspace)", head, want)
	}

	// The next claim goes on where the first stopped.
	got, err = f.st.Events().ClaimUndispatched(f.ctx, 500, time.Minute, nil)
	if err != nil || !slices.Equal(claimOrder(got), a[497:]) {
		t.Fatalf("second claim: %d events (%v), want the busy workspace's last 103 oldest first", len(got), err)
	}
}

// Within a workspace a claim stays oldest first; between workspaces, turns
// go in rotation by workspace id, each claim going on after the workspace
// the previous one's first turn ended on, and the limit cuts wherever it
// falls.
func TestEventsClaimTurnsAndLimit(t *testing.T) {
	f := newWebhookFixture(t)
	third, err := f.st.Bootstrap(f.ctx, "Three", "three-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	byWS := map[uuid.UUID][]uuid.UUID{
		f.ws.WorkspaceID:    f.pending(t, f.ws.WorkspaceID, 5, t0),
		f.other.WorkspaceID: f.pending(t, f.other.WorkspaceID, 5, t0.Add(time.Second)),
		third.WorkspaceID:   f.pending(t, third.WorkspaceID, 1, t0.Add(2*time.Second)),
	}
	ws := []uuid.UUID{f.ws.WorkspaceID, f.other.WorkspaceID, third.WorkspaceID}
	slices.SortFunc(ws, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	// The expected claims, by turn then rotation: the rotation after the
	// first claim (whose turn 1 takes all three) starts again at the lowest.
	var want []uuid.UUID
	for turn := range 5 {
		for _, w := range ws {
			if turn < len(byWS[w]) {
				want = append(want, byWS[w][turn])
			}
		}
	}
	turns := new(store.ClaimTurns)
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 7, time.Minute, turns)
	if err != nil || !slices.Equal(claimOrder(got), want[:7]) {
		t.Fatalf("claimed %v (%v)\nwant     %v", claimOrder(got), err, want[:7])
	}
	got, err = f.st.Events().ClaimUndispatched(f.ctx, 3, time.Minute, turns)
	if err != nil || !slices.Equal(claimOrder(got), want[7:10]) {
		t.Fatalf("second claim of 3: %v (%v), want %v", claimOrder(got), err, want[7:10])
	}
	got, err = f.st.Events().ClaimUndispatched(f.ctx, 100, time.Minute, turns)
	if err != nil || !slices.Equal(claimOrder(got), want[10:]) {
		t.Fatalf("last claim: %v (%v), want %v", claimOrder(got), err, want[10:])
	}
}

// However many workspaces have a backlog, a quiet workspace's new event is
// claimed within a rotation: claims go on after the workspace the last one's
// first turn ended on. Ordering each turn by the age of each workspace's
// oldest event (as before) left it behind every older event once more
// workspaces than a claim's limit had a backlog: with 20 busy workspaces of
// 100 events and claims of 16, its event came in the 126th claim.
func TestEventsClaimRotatesPastManyBacklogs(t *testing.T) {
	f := newWebhookFixture(t)
	const busy, backlog, limit = 20, 100, 16
	t0 := time.Now().Add(-time.Hour)
	for i := range busy {
		w, err := f.st.Bootstrap(f.ctx, fmt.Sprintf("Busy %d", i), fmt.Sprintf("busy-%d-%s@example.com", i, uuid.NewString()[:8]))
		if err != nil {
			t.Fatal(err)
		}
		f.pending(t, w.WorkspaceID, backlog, t0.Add(time.Duration(i)*time.Second))
	}
	quiet := f.pending(t, f.other.WorkspaceID, 1, t0.Add(time.Hour))[0]

	turns := new(store.ClaimTurns)
	rotation := (busy + 1 + limit - 1) / limit // claims for every workspace's turn 1
	for claim := 1; claim <= rotation; claim++ {
		got, err := f.st.Events().ClaimUndispatched(f.ctx, limit, time.Minute, turns)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(claimOrder(got), quiet) {
			return
		}
	}
	t.Fatalf("the quiet workspace's event was not among the first %d claims of %d behind %d workspaces' backlogs", rotation, limit, busy)
}

// A test event is claimed before any backlog, its own workspace's too:
// someone is watching their endpoint for it.
func TestEventsClaimTestEventsFirst(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	a := f.pending(t, f.ws.WorkspaceID, 600, t0)
	test := f.pendingOf(t, f.ws.WorkspaceID, models.EventWebhookTest, 1, t0.Add(time.Minute))
	b := f.pending(t, f.other.WorkspaceID, 1, t0.Add(2*time.Minute))
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 3, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []uuid.UUID{test[0], a[0], b[0]}
	if idLess(f.other.WorkspaceID, f.ws.WorkspaceID) {
		want = []uuid.UUID{test[0], b[0], a[0]}
	}
	if !slices.Equal(claimOrder(got), want) {
		t.Fatalf("claimed %v\nwant     %v (the test event, then each workspace's oldest)", claimOrder(got), want)
	}
	rest, err := f.st.Events().ClaimUndispatched(f.ctx, 1000, time.Minute, nil)
	if err != nil || len(rest) != 599 || slices.Contains(claimOrder(rest), test[0]) {
		t.Fatalf("then %d events (%v), want A's other 599 and no second claim of the test event", len(rest), err)
	}
}

// Rows another relay holds locked (its claim in flight) are passed over:
// the claim still fills its batch, fairly, from the rows behind them.
func TestEventsClaimPassesOverLockedRows(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	a := f.pending(t, f.ws.WorkspaceID, 30, t0)
	b := f.pending(t, f.other.WorkspaceID, 3, t0.Add(time.Minute))

	tx, err := f.st.DB().BeginTx(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(f.ctx, `SELECT id FROM events WHERE id IN (?) FOR UPDATE`, bun.List(a[:10])); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 15, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 15 {
		t.Fatalf("claimed %d beside 10 locked rows, want a full batch of 15", len(got))
	}
	if ga := ofWorkspace(got, f.ws.WorkspaceID); !slices.Equal(ga, a[10:22]) {
		t.Fatalf("busy workspace: claimed %v, want its 11th to 22nd oldest in order", ga)
	}
	if gb := ofWorkspace(got, f.other.WorkspaceID); !slices.Equal(gb, b) {
		t.Fatalf("other workspace: claimed %v, want all 3", gb)
	}
}

// Relays claiming at once over several workspaces get disjoint batches,
// each within the limit, and together every event.
func TestEventsClaimConcurrentAcrossWorkspaces(t *testing.T) {
	f := newWebhookFixture(t)
	t0 := time.Now().Add(-time.Hour)
	all := append(f.pending(t, f.ws.WorkspaceID, 300, t0), f.pending(t, f.other.WorkspaceID, 60, t0.Add(time.Second))...)

	seen := map[uuid.UUID]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				got, err := f.st.Events().ClaimUndispatched(f.ctx, 25, time.Minute, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) > 25 {
					t.Errorf("claimed %d, over the limit of 25", len(got))
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, ev := range got {
					seen[ev.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(all) {
		t.Fatalf("claimed %d distinct events of %d", len(seen), len(all))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s claimed %d times", id, n)
		}
	}
}

// Claims share the batch evenly across workspaces: each goes on after the
// last workspace served, whatever turn the limit cut. Ending each claim at
// the end of turn 1 gave the lowest ids twice the others' share whenever
// the workspaces fitted in one turn.
func TestEventsClaimSharesEvenly(t *testing.T) {
	f := newWebhookFixture(t)
	const busy, limit, claims = 10, 16, 10
	t0 := time.Now().Add(-time.Hour)
	for i := range busy {
		w, err := f.st.Bootstrap(f.ctx, fmt.Sprintf("Even %d", i), fmt.Sprintf("even-%d-%s@example.com", i, uuid.NewString()[:8]))
		if err != nil {
			t.Fatal(err)
		}
		f.pending(t, w.WorkspaceID, 100, t0)
	}
	turns := new(store.ClaimTurns)
	served := map[uuid.UUID]int{}
	for range claims {
		got, err := f.st.Events().ClaimUndispatched(f.ctx, limit, time.Minute, turns)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range got {
			served[ev.WorkspaceID]++
		}
	}
	for w, n := range served {
		if n != limit*claims/busy {
			t.Errorf("workspace %v got %d of %d claims of %d, want %d like every other", w, n, claims, limit, limit*claims/busy)
		}
	}
}

// Test events go oldest first whatever their workspace.
func TestEventsClaimTestEventsByAge(t *testing.T) {
	f := newWebhookFixture(t)
	low, high := f.ws.WorkspaceID, f.other.WorkspaceID
	if idLess(high, low) {
		low, high = high, low
	}
	t0 := time.Now().Add(-time.Hour)
	older := f.pendingOf(t, high, models.EventWebhookTest, 1, t0)[0]
	newer := f.pendingOf(t, low, models.EventWebhookTest, 1, t0.Add(time.Minute))[0]
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 2, time.Minute, new(store.ClaimTurns))
	if err != nil || !slices.Equal(claimOrder(got), []uuid.UUID{older, newer}) {
		t.Fatalf("claimed %v (%v), want the older test event first", claimOrder(got), err)
	}
}

func idLess(a, b uuid.UUID) bool { return slices.Compare(a[:], b[:]) < 0 }
