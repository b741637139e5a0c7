package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// wantRetry fails unless f counts failures failures and may be claimed
// again in about wait (by this host's clock, the database's being the same).
func wantRetry(t *testing.T, f store.SendFailure, failures int, wait time.Duration) {
	t.Helper()
	if in := time.Until(f.RetryAt); f.Failures != failures || in <= wait/2 || in > wait {
		t.Fatalf("failure %+v (retry in %v), want %d failures, retried in about %v", f, in, failures, wait)
	}
}

// An event whose start failed is not claimed again before its retry time,
// 1 s after its first failure and twice as long after each next one, and
// is claimed once that time has passed. A dispatched event has nothing to
// hold back.
func TestEventsClaimSkipsAFailedEventUntilItsRetry(t *testing.T) {
	f := newWebhookFixture(t)
	f.create(t, f.ws, true, models.EventTestCreated) // a recipient, so the events wait for workflows
	var ids []uuid.UUID
	for _, ev := range f.createEvents(t, 3) {
		ids = append(ids, ev.ID)
	}
	events := f.st.Events()
	if got, err := events.ClaimUndispatched(f.ctx, 10, time.Minute, nil); err != nil || len(got) != 3 {
		t.Fatalf("claim: %d (%v), want 3", len(got), err)
	}
	failed, err := events.ReleaseFailed(f.ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 1, time.Second)
	if err := events.ReleaseClaims(f.ctx, ids[1:]); err != nil {
		t.Fatal(err)
	}
	got, err := events.ClaimUndispatched(f.ctx, 10, time.Minute, nil)
	if err != nil || len(got) != 2 || got[0].ID != ids[1] || got[1].ID != ids[2] {
		t.Fatalf("claim before the retry time: %+v (%v), want the two released events only", got, err)
	}

	time.Sleep(time.Until(failed.RetryAt) + 100*time.Millisecond)
	got, err = events.ClaimUndispatched(f.ctx, 10, time.Minute, nil)
	if err != nil || len(got) != 1 || got[0].ID != ids[0] {
		t.Fatalf("claim after the retry time: %+v (%v), want the failed event", got, err)
	}
	failed, err = events.ReleaseFailed(f.ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 2, 2*time.Second)

	if err := events.MarkManyDispatched(f.ctx, ids[1:2]); err != nil {
		t.Fatal(err)
	}
	if done, err := events.ReleaseFailed(f.ctx, ids[1]); err != nil || done.Failures != 0 {
		t.Fatalf("a dispatched event's failure: %+v (%v), want nothing counted", done, err)
	}
}

// The lifecycle outboxes hold a failed key back the same way, and a key's
// next change starts without the failures of the last one synced.
func TestAPIKeyClaimSkipsAFailedKeyUntilItsRetry(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	ids := f.pendingKeys(t, 2, time.Now().Add(-time.Minute))
	if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || len(got) != 2 {
		t.Fatalf("claim: %d (%v), want 2", len(got), err)
	}
	failed, err := f.keys.ReleaseFailed(ctx, lifecycleChange(t, f.st, "api_keys", ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 1, time.Second)
	if err := f.keys.ReleaseClaims(ctx, ids[1:]); err != nil {
		t.Fatal(err)
	}
	if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(got), ids[1:]) {
		t.Fatalf("claim before the retry time: %v (%v), want the released key only", claimedIDs(got), err)
	}

	time.Sleep(time.Until(failed.RetryAt) + 100*time.Millisecond)
	got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10)
	if err != nil || !slices.Equal(claimedIDs(got), ids[:1]) {
		t.Fatalf("claim after the retry time: %v (%v), want the failed key", claimedIDs(got), err)
	}
	if failed, err = f.keys.ReleaseFailed(ctx, lifecycleChange(t, f.st, "api_keys", ids[0])); err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 2, 2*time.Second)

	if !f.markSynced(t, ids[0], got[0].Seq) {
		t.Fatal("the key's change was not marked synced")
	}
	if _, err := f.keys.Rotate(ctx, f.admin, ids[0], models.APIKeyRotation{Grace: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Equal(claimedIDs(got), ids[:1]) {
		t.Fatalf("claim of the next change: %v (%v), want the key at once", claimedIDs(got), err)
	}
	if failed, err = f.keys.ReleaseFailed(ctx, lifecycleChange(t, f.st, "api_keys", ids[0])); err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 1, time.Second)
}

// A new change of a row held back after failed sends is claimable at once
// and starts without those failures (its first failure holds it back 1 s,
// not 2): the change that failed (a rotation, say) must not delay the one
// after it (a revocation) by minutes.
func TestALifecycleChangeDropsTheFailuresOfTheOneBefore(t *testing.T) {
	ctx := context.Background()
	t.Run("API keys", func(t *testing.T) {
		f := newKeyFixture(t)
		for i, change := range []func(uuid.UUID) error{
			func(id uuid.UUID) error { return f.keys.Revoke(ctx, f.admin, id, time.Now()) },
			func(id uuid.UUID) error {
				_, err := f.keys.Rotate(ctx, f.admin, id, models.APIKeyRotation{Grace: time.Hour, Now: time.Now()})
				return err
			},
		} {
			id := f.pendingKeys(t, 1, time.Now().Add(-time.Minute))[0]
			holdBack(t, func() ([]uuid.UUID, error) {
				got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10)
				return claimedIDs(got), err
			}, func() error {
				_, err := f.keys.ReleaseFailed(ctx, lifecycleChange(t, f.st, "api_keys", id))
				return err
			}, id)
			if err := change(id); err != nil {
				t.Fatal(err)
			}
			if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Contains(claimedIDs(got), id) {
				t.Fatalf("change %d: claim after the next change: %v (%v), want the key at once", i, claimedIDs(got), err)
			}
			failed, err := f.keys.ReleaseFailed(ctx, lifecycleChange(t, f.st, "api_keys", id))
			if err != nil {
				t.Fatal(err)
			}
			wantRetry(t, failed, 1, time.Second)
		}
	})
	t.Run("signing secrets", func(t *testing.T) {
		f := newWebhookFixture(t)
		w := f.create(t, f.ws, true, models.EventTestCreated)
		hooks := f.st.Webhooks()
		if _, err := hooks.RotateSecret(ctx, f.ws.WorkspaceID, w.ID, []byte{4}, nil, time.Hour); err != nil {
			t.Fatal(err)
		}
		claim := func() ([]uuid.UUID, error) {
			got, err := hooks.ClaimUnsyncedSecrets(ctx, time.Minute, 10)
			ids := make([]uuid.UUID, len(got))
			for i, c := range got {
				ids[i] = c.ID
			}
			return ids, err
		}
		holdBack(t, claim, func() error {
			_, err := hooks.ReleaseFailedSecret(ctx, lifecycleChange(t, f.st, "webhook_subscriptions", w.ID))
			return err
		}, w.ID)
		if _, err := hooks.RotateSecret(ctx, f.ws.WorkspaceID, w.ID, []byte{5}, nil, 0); err != nil {
			t.Fatal(err)
		}
		if got, err := claim(); err != nil || !slices.Contains(got, w.ID) {
			t.Fatalf("claim after the next rotation: %v (%v), want the subscription at once", got, err)
		}
		failed, err := hooks.ReleaseFailedSecret(ctx, lifecycleChange(t, f.st, "webhook_subscriptions", w.ID))
		if err != nil {
			t.Fatal(err)
		}
		wantRetry(t, failed, 1, time.Second)
	})
}

// holdBack claims id, fails its send (held back 1 s) and checks that the
// next claim passes over it.
func holdBack(t *testing.T, claim func() ([]uuid.UUID, error), fail func() error, id uuid.UUID) {
	t.Helper()
	if got, err := claim(); err != nil || !slices.Contains(got, id) {
		t.Fatalf("claim: %v (%v), want %v among them", got, err, id)
	}
	if err := fail(); err != nil {
		t.Fatal(err)
	}
	if got, err := claim(); err != nil || slices.Contains(got, id) {
		t.Fatalf("claim while held back: %v (%v), want %v passed over", got, err, id)
	}
}

// lifecycleChange is the row's current change, as a relay claiming it now
// would hold it.
func lifecycleChange(t *testing.T, st *store.Store, table string, id uuid.UUID) store.LifecycleChange {
	t.Helper()
	c := store.LifecycleChange{ID: id}
	if err := st.DB().NewRaw(`SELECT lifecycle_seq FROM `+table+` WHERE id = ?`, id).Scan(context.Background(), &c.Seq); err != nil {
		t.Fatal(err)
	}
	return c
}

// A late failure of a change a newer one replaced charges nothing: the
// newer change stays claimable at once, without failures.
func TestALateFailureOfAnOldChangeChargesNothing(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	id := f.pendingKeys(t, 1, time.Now().Add(-time.Minute))[0]
	old := lifecycleChange(t, f.st, "api_keys", id)
	if got, err := f.keys.ClaimUnsynced(ctx, time.Minute, 10); err != nil || !slices.Contains(claimedIDs(got), id) {
		t.Fatalf("claim: %v (%v)", claimedIDs(got), err)
	}
	if err := f.keys.Revoke(ctx, f.admin, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	if failed, err := f.keys.ReleaseFailed(ctx, old); err != nil || failed.Failures != 0 {
		t.Fatalf("the old change's late failure: %+v (%v), want nothing charged", failed, err)
	}
}
