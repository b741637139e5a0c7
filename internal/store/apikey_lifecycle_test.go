package store_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// lifecycle reads a key's lifecycle state.
func (f keyFixture) lifecycle(t *testing.T, id uuid.UUID) store.KeyLifecycle {
	t.Helper()
	l, err := f.keys.Lifecycle(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (f keyFixture) markSynced(t *testing.T, id uuid.UUID, seq int64) bool {
	t.Helper()
	wrote, err := f.keys.MarkSynced(context.Background(), []store.LifecycleChange{{ID: id, Seq: seq}})
	if err != nil {
		t.Fatal(err)
	}
	return wrote == 1
}

// Every change a key's workflow must hear of leaves the key pending, in the
// change's own statement; marking it synced clears that.
func TestAPIKeyLifecycleChangesArePending(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now()
	exp := now.Add(time.Hour)

	plain := f.create(t, f.admin, nil, now)
	if l := f.lifecycle(t, plain.ID); l.Pending || l.Seq != 0 {
		t.Errorf("a key without expiry: %+v, want nothing pending", l)
	}
	if l := f.lifecycle(t, f.admin.KeyID); l.Pending {
		t.Errorf("a bootstrapped key: %+v, want nothing pending", l)
	}

	expiring := f.create(t, f.admin, &exp, now)
	l := f.lifecycle(t, expiring.ID)
	if !l.Pending || l.Seq != 1 || l.ExpiresAt == nil || l.WorkspaceID != f.admin.WorkspaceID || l.Rotated || l.Revoked {
		t.Fatalf("a key with expiry: %+v, want change 1 pending with the expiry", l)
	}
	if !f.markSynced(t, expiring.ID, l.Seq) || f.lifecycle(t, expiring.ID).Pending {
		t.Fatal("marking the change synced did not clear it")
	}

	// A rotation, even one that leaves no deadline (a running workflow must
	// drop the old one).
	if _, err := f.keys.Rotate(ctx, f.admin, plain.ID, models.APIKeyRotation{Now: now}); err != nil {
		t.Fatal(err)
	}
	if l := f.lifecycle(t, plain.ID); !l.Pending || l.Seq != 1 || !l.Rotated || l.PreviousKeyExpiresAt != nil {
		t.Errorf("after a rotation without grace: %+v, want change 1 pending", l)
	}
	if _, err := f.keys.Rotate(ctx, f.admin, expiring.ID, models.APIKeyRotation{Grace: time.Minute, Now: now}); err != nil {
		t.Fatal(err)
	}
	if l := f.lifecycle(t, expiring.ID); !l.Pending || l.Seq != 2 || l.PreviousKeyExpiresAt == nil {
		t.Errorf("after a rotation with grace: %+v, want change 2 pending with the grace deadline", l)
	}

	if err := f.keys.Revoke(ctx, f.admin, expiring.ID, now); err != nil {
		t.Fatal(err)
	}
	if l := f.lifecycle(t, expiring.ID); !l.Pending || l.Seq != 3 || !l.Revoked {
		t.Errorf("after a revocation: %+v, want change 3 pending and revoked", l)
	}

	// A rename has nothing for the workflow.
	name := "renamed"
	f.markSynced(t, plain.ID, 1)
	if _, err := f.keys.Rename(ctx, f.admin, plain.ID, &name, now); err != nil {
		t.Fatal(err)
	}
	if l := f.lifecycle(t, plain.ID); l.Pending {
		t.Errorf("after a rename: %+v, want nothing pending", l)
	}
}

// A signal sent for an older change must not mark a newer one synced, in
// whichever order the two notifiers finish.
func TestAPIKeyLifecycleOlderSyncKeepsNewerChange(t *testing.T) {
	f := newKeyFixture(t)
	now := time.Now()
	k := f.create(t, f.admin, nil, now)
	rotate := func() {
		t.Helper()
		if _, err := f.keys.Rotate(context.Background(), f.admin, k.ID, models.APIKeyRotation{Grace: time.Hour, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	rotate()
	older := f.lifecycle(t, k.ID) // a notifier reads change 1, then signals...
	rotate()                      // ...while another rotation commits

	if !f.markSynced(t, k.ID, older.Seq) {
		t.Fatal("marking change 1 wrote nothing")
	}
	if l := f.lifecycle(t, k.ID); !l.Pending || l.Seq != 2 {
		t.Fatalf("after marking change 1: %+v, want change 2 still pending", l)
	}
	if !f.markSynced(t, k.ID, 2) || f.lifecycle(t, k.ID).Pending {
		t.Fatal("marking change 2 did not clear it")
	}
	// The slower notifier of change 1 finishing last changes nothing.
	if f.markSynced(t, k.ID, older.Seq) {
		t.Error("marking change 1 after change 2 wrote the row")
	}
	if l := f.lifecycle(t, k.ID); l.Pending {
		t.Errorf("after a late mark of change 1: %+v, want nothing pending", l)
	}
}

// pendingKeys creates n keys with an expiry, each a pending change made at
// changedAt.
func (f keyFixture) pendingKeys(t *testing.T, n int, changedAt time.Time) []uuid.UUID {
	t.Helper()
	exp := changedAt.Add(time.Hour)
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = f.create(t, f.admin, &exp, changedAt).ID
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids
}

func claimedIDs(ls []store.KeyLifecycle) []uuid.UUID {
	ids := make([]uuid.UUID, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	return ids
}

// Two relays claiming at the same moment split the pending keys: each
// key goes to exactly one of them.
func TestAPIKeyLifecycleConcurrentClaimsAreDisjoint(t *testing.T) {
	f := newKeyFixture(t)
	t0 := time.Now().Add(-time.Minute)
	want := f.pendingKeys(t, 40, t0)

	for round := range 5 {
		// Each round starts from unleased keys.
		if err := f.keys.ReleaseClaims(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var got [2][]store.KeyLifecycle
		var errs [2]error
		start := make(chan struct{})
		for i := range got {
			wg.Go(func() {
				<-start
				got[i], errs[i] = f.keys.ClaimUnsynced(context.Background(), time.Minute, 30)
			})
		}
		close(start)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("round %d: claims failed: %v, %v", round, errs[0], errs[1])
		}
		a, b := claimedIDs(got[0]), claimedIDs(got[1])
		for _, id := range a {
			if slices.Contains(b, id) {
				t.Fatalf("round %d: key %s claimed by both", round, id)
			}
		}
		if all := claimedIDs(append(got[0], got[1]...)); !slices.Equal(all, want) {
			t.Fatalf("round %d: claimed %d + %d keys, want the %d pending ones once each", round, len(a), len(b), len(want))
		}
	}
}

// A claim passes over rows another transaction holds locked (SKIP LOCKED)
// rather than waiting for them, takes a change however recent (and however
// far ahead the clock of the API host that stamped it), and leases what it
// takes, by the database's clock, until the lease lapses or is released.
func TestAPIKeyLifecycleClaimSkipsLockedAndLeases(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	ids := f.pendingKeys(t, 4, time.Now().Add(-time.Minute))
	ahead := f.pendingKeys(t, 1, time.Now().Add(time.Hour))[0] // stamped by a host an hour fast
	all := append(slices.Clone(ids), ahead)
	slices.SortFunc(all, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })

	// Another claimer is mid-claim on the first two keys.
	tx, err := f.st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	if _, err := tx.ExecContext(ctx, `SELECT id FROM api_keys WHERE id IN (?, ?) FOR UPDATE`, ids[0], ids[1]); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := f.keys.ClaimUnsynced(cctx, time.Minute, 10)
	if err != nil {
		t.Fatalf("claim beside locked rows: %v (it waited for the locks?)", err)
	}
	wantFirst := append(want(ids, 2, 3), ahead)
	slices.SortFunc(wantFirst, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	if !slices.Equal(claimedIDs(got), wantFirst) {
		t.Fatalf("claimed %v, want the unlocked keys, the one stamped ahead included", claimedIDs(got))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// Leased: not claimable again, until released or lapsed.
	if again, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(again), want(ids, 0, 1)) {
		t.Fatalf("second claim: %v (%v), want only the keys that were locked", claimedIDs(again), err)
	}
	if again, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || len(again) != 0 {
		t.Fatalf("claim while everything is leased: %v (%v), want none", claimedIDs(again), err)
	}
	if err := f.keys.ReleaseClaims(ctx, want(ids, 0)); err != nil {
		t.Fatal(err)
	}
	if again, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(again), want(ids, 0)) {
		t.Fatalf("claim after a release: %v (%v), want the released key", claimedIDs(again), err)
	}
	if err := f.keys.ReleaseClaims(ctx, all); err != nil {
		t.Fatal(err)
	}
	if got, err := f.keys.ClaimUnsynced(ctx, 300*time.Millisecond, 10); err != nil || len(got) != len(all) {
		t.Fatalf("short claim: %v (%v), want all five", claimedIDs(got), err)
	}
	time.Sleep(400 * time.Millisecond)
	if again, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(again), all) {
		t.Fatalf("claim after the leases lapsed: %v (%v), want all five", claimedIDs(again), err)
	}

	// A synced key is never claimed, whatever its lease.
	if err := f.keys.ReleaseClaims(ctx, all); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		f.markSynced(t, id, 1)
	}
	if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(got), []uuid.UUID{ahead}) {
		t.Fatalf("claim after syncing: %v (%v), want only the key not synced", claimedIDs(got), err)
	}
}

// MarkSynced marks many keys in one statement, each only as of the change
// read: a key changed since stays pending.
func TestAPIKeyLifecycleMarkSyncedMany(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	ids := f.pendingKeys(t, 3, time.Now().Add(-time.Minute))
	claimed, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %d (%v)", len(claimed), err)
	}
	if _, err := f.keys.Rotate(ctx, f.admin, ids[1], models.APIKeyRotation{Grace: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	changes := make([]store.LifecycleChange, len(claimed))
	for i, l := range claimed {
		changes[i] = l.Change()
	}
	if wrote, err := f.keys.MarkSynced(ctx, changes); err != nil || wrote != 3 {
		t.Fatalf("marked %d (%v), want 3 rows written", wrote, err)
	}
	for i, id := range ids {
		if pending := f.lifecycle(t, id).Pending; pending != (i == 1) {
			t.Errorf("key %d pending %v after the mark, want %v", i, pending, i == 1)
		}
	}
}

// want picks ids by index.
func want(ids []uuid.UUID, at ...int) []uuid.UUID {
	out := make([]uuid.UUID, len(at))
	for i, j := range at {
		out[i] = ids[j]
	}
	return out
}
