package store_test

import (
	"context"
	"encoding/json"
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
	for range 3 {
		ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
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
	failed, err := f.keys.ReleaseFailed(ctx, ids[0])
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
	if failed, err = f.keys.ReleaseFailed(ctx, ids[0]); err != nil {
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
	if failed, err = f.keys.ReleaseFailed(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	wantRetry(t, failed, 1, time.Second)
}
