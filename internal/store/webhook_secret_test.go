package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// secrets reads the subscription's secrets as a delivery attempt does
// (AttemptState: the previous secret only while unexpired by the
// database's clock) and as stored (Target).
func (f *webhookFixture) secrets(t *testing.T, id uuid.UUID) (current, previous, stored []byte) {
	t.Helper()
	st, err := f.st.Deliveries().AttemptState(f.ctx, id, uuid.New(), 1)
	if err != nil || !st.TargetFound {
		t.Fatalf("attempt state: found %v, %v", st.TargetFound, err)
	}
	tg, err := f.st.Webhooks().Target(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return st.Target.SecretCiphertext, st.Target.PreviousSecretCiphertext, tg.PreviousSecretCiphertext
}

// A rotation keeps the replaced secret for the grace period (by the
// database's clock); a second rotation replaces the previous secret, so
// only two ever sign; a zero grace drops the old secret at once; another
// workspace's subscription is not found.
func TestWebhookRotateSecret(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	hooks := f.st.Webhooks()

	before := time.Now()
	exp, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("second"), nil, time.Hour)
	if err != nil || exp == nil {
		t.Fatalf("rotate: %v, %v", exp, err)
	}
	if d := exp.Sub(before); d < time.Hour-5*time.Second || d > time.Hour+5*time.Second {
		t.Fatalf("previous secret expires %v after the rotation, want an hour", d)
	}
	if cur, prev, _ := f.secrets(t, w.ID); string(cur) != "second" || !bytes.Equal(prev, f.sealed) {
		t.Fatalf("after one rotation: current %q previous %v; want second and the original", cur, prev)
	}

	exp2, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("third"), nil, 2*time.Hour)
	if err != nil || exp2 == nil || !exp2.After(*exp) {
		t.Fatalf("second rotation: %v, %v", exp2, err)
	}
	if cur, prev, _ := f.secrets(t, w.ID); string(cur) != "third" || string(prev) != "second" {
		t.Fatalf("after two rotations: current %q previous %q; want third and second (the original stops at once)", cur, prev)
	}

	exp3, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("fourth"), nil, 0)
	if err != nil || exp3 != nil {
		t.Fatalf("rotation without grace: %v, %v", exp3, err)
	}
	if cur, prev, stored := f.secrets(t, w.ID); string(cur) != "fourth" || prev != nil || stored != nil {
		t.Fatalf("after a rotation without grace: current %q previous %q stored %q; want no previous", cur, prev, stored)
	}

	for name, c := range map[string]struct{ ws, id uuid.UUID }{
		"another workspace's": {f.other.WorkspaceID, w.ID},
		"missing":             {f.ws.WorkspaceID, uuid.New()},
	} {
		if _, err := hooks.RotateSecret(f.ctx, c.ws, c.id, []byte("x"), nil, time.Hour); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("%s subscription: %v, want not found", name, err)
		}
	}
	if cur, _, _ := f.secrets(t, w.ID); string(cur) != "fourth" {
		t.Fatalf("a refused rotation changed the secret to %q", cur)
	}
}

// The previous secret stops signing at its expiry, by the database's
// clock, before anything clears it; clearing erases only an expired one,
// so a late clear never undoes a newer rotation; the retention sweep
// clears whatever expired.
func TestWebhookPreviousSecretExpiry(t *testing.T) {
	f := newWebhookFixture(t)
	hooks := f.st.Webhooks()
	w := f.create(t, f.ws, true, models.EventTestCreated)

	if _, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("second"), nil, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, prev, stored := f.secrets(t, w.ID); prev != nil || stored == nil {
		t.Fatalf("past its expiry: attempts see previous %v (want none), stored %v (want still there)", prev, stored)
	}

	// Not yet due at the caller's clock: nothing changes.
	if s, err := hooks.ClearExpiredPreviousSecret(f.ctx, w.ID, time.Now().Add(-time.Hour)); err != nil || !s.Found || s.Cleared || s.ExpiresAt == nil {
		t.Fatalf("clear before the expiry: %+v, %v", s, err)
	}
	if s, err := hooks.ClearExpiredPreviousSecret(f.ctx, w.ID, time.Now()); err != nil || !s.Found || !s.Cleared || s.ExpiresAt != nil {
		t.Fatalf("clear after the expiry: %+v, %v", s, err)
	}
	if _, _, stored := f.secrets(t, w.ID); stored != nil {
		t.Fatal("the cleared previous secret is still stored")
	}

	// A newer rotation's previous secret survives a clear meant for the
	// older one.
	if _, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("third"), nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	s, err := hooks.ClearExpiredPreviousSecret(f.ctx, w.ID, time.Now())
	if err != nil || s.Cleared || s.ExpiresAt == nil {
		t.Fatalf("clear during the newer grace period: %+v, %v", s, err)
	}
	if _, prev, _ := f.secrets(t, w.ID); string(prev) != "second" {
		t.Fatalf("previous %q, want second", prev)
	}

	if s, err := hooks.ClearExpiredPreviousSecret(f.ctx, uuid.New(), time.Now()); err != nil || s.Found {
		t.Fatalf("missing subscription: %+v, %v", s, err)
	}

	// The sweep: one expired, one not.
	x := f.create(t, f.other, true, models.EventTestCreated)
	if _, err := hooks.RotateSecret(f.ctx, f.other.WorkspaceID, x.ID, []byte("x2"), nil, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if n, err := hooks.ClearExpiredPreviousSecrets(f.ctx, time.Now(), 100); err != nil || n != 1 {
		t.Fatalf("sweep cleared %d, %v; want 1", n, err)
	}
	if _, _, stored := f.secrets(t, x.ID); stored != nil {
		t.Fatal("the sweep left the expired previous secret")
	}
	if _, prev, _ := f.secrets(t, w.ID); string(prev) != "second" {
		t.Fatalf("the sweep cleared a previous secret in its grace period: %q", prev)
	}
}

// A test event goes to the one subscription, whatever types it takes,
// waits in the outbox like any event, and is refused for a disabled or
// another workspace's subscription.
func TestEventsCreateTest(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	f.create(t, f.ws, true, models.EventTestCreated) // takes test.created too, gets nothing
	data := json.RawMessage(`{"subscriptionId":"` + w.ID.String() + `","message":"hi"}`)

	ev, err := f.st.Events().CreateTest(f.ctx, f.ws.WorkspaceID, w.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.st.Events().Get(f.ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != models.EventWebhookTest || got.WorkspaceID != f.ws.WorkspaceID || got.DispatchedAt != nil ||
		len(got.Recipients) != 1 || got.Recipients[0] != w.ID || !got.DateCreated.Equal(ev.DateCreated) {
		t.Fatalf("stored %+v; want an undispatched webhook.test event for %s only", got, w.ID)
	}
	var d map[string]string
	if err := json.Unmarshal(got.Data, &d); err != nil || d["subscriptionId"] != w.ID.String() || d["message"] != "hi" {
		t.Fatalf("data %s, %v", got.Data, err)
	}
	claimed, err := f.st.Events().ClaimUndispatched(f.ctx, 10, time.Minute, nil)
	if err != nil || len(claimed) != 1 || claimed[0].ID != ev.ID {
		t.Fatalf("outbox: %+v, %v; want the test event", claimed, err)
	}

	off := f.create(t, f.ws, false, models.EventTestCreated)
	_, err = f.st.Events().CreateTest(f.ctx, f.ws.WorkspaceID, off.ID, data)
	var me *models.Error
	if !errors.As(err, &me) || me.Code != "webhook_disabled" || !errors.Is(err, models.ErrConflict) {
		t.Fatalf("disabled subscription: %v, want conflict webhook_disabled", err)
	}
	for name, c := range map[string]struct{ ws, id uuid.UUID }{
		"another workspace's": {f.other.WorkspaceID, w.ID},
		"missing":             {f.ws.WorkspaceID, uuid.New()},
	} {
		if _, err := f.st.Events().CreateTest(f.ctx, c.ws, c.id, data); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("%s subscription: %v, want not found", name, err)
		}
	}
}
