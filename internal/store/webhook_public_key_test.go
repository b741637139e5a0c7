package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func (f *webhookFixture) createV1a(t *testing.T, publicKey string) models.WebhookSubscription {
	t.Helper()
	w, err := f.st.Webhooks().Create(f.ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: f.ws.WorkspaceID, CreatorID: f.ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		SignatureScheme: models.SignatureV1a, PublicKey: &publicKey,
	}, f.sealed, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A v1a subscription shows its scheme and its public key; a rotation with
// a grace period keeps the previous key beside the new one until the
// previous secret expires, and both go together when it is cleared.
func TestWebhookPublicKeyRotation(t *testing.T) {
	f := newWebhookFixture(t)
	hooks := f.st.Webhooks()
	w := f.createV1a(t, "whpk_first")
	if got, _ := hooks.Get(f.ctx, f.ws.WorkspaceID, w.ID); w.SignatureScheme != models.SignatureV1a || got.SignatureScheme != models.SignatureV1a {
		t.Fatalf("scheme on create %q, on read %q; want v1a", w.SignatureScheme, got.SignatureScheme)
	}
	pk, err := hooks.PublicKey(f.ctx, f.ws.WorkspaceID, w.ID)
	if err != nil || pk.PublicKey != "whpk_first" || pk.PreviousPublicKey != nil || pk.PreviousExpiresAt != nil {
		t.Fatalf("public key before a rotation: %+v, %v", pk, err)
	}

	second := "whpk_second"
	exp, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("sealed second"), &second, time.Hour)
	if err != nil || exp == nil {
		t.Fatalf("rotate: %v, %v", exp, err)
	}
	pk, err = hooks.PublicKey(f.ctx, f.ws.WorkspaceID, w.ID)
	if err != nil || pk.PublicKey != second || pk.PreviousPublicKey == nil || *pk.PreviousPublicKey != "whpk_first" ||
		pk.PreviousExpiresAt == nil || !pk.PreviousExpiresAt.Equal(*exp) {
		t.Fatalf("public key in the grace period: %+v, %v; want second, first until %v", pk, err, exp)
	}
	if cur, prev, _ := f.secrets(t, w.ID); string(cur) != "sealed second" || string(prev) != string(f.sealed) {
		t.Fatalf("sealed keys in the grace period: %q, %q", cur, prev)
	}

	// A v1 rotation (no public key) of a v1a subscription matches nothing.
	if _, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("whsec"), nil, 0); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a v1 key for a v1a subscription: %v, want not found", err)
	}

	third := "whpk_third"
	if _, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, w.ID, []byte("sealed third"), &third, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// Expired by the database's clock: no longer shown even before it is cleared.
	if pk, err := hooks.PublicKey(f.ctx, f.ws.WorkspaceID, w.ID); err != nil || pk.PublicKey != third || pk.PreviousPublicKey != nil || pk.PreviousExpiresAt != nil {
		t.Fatalf("after the grace period: %+v, %v", pk, err)
	}
	if s, err := hooks.ClearExpiredPreviousSecret(f.ctx, w.ID, time.Now()); err != nil || !s.Cleared {
		t.Fatalf("clear: %+v, %v", s, err)
	}
	var stored *string
	if err := f.st.DB().NewRaw(`SELECT previous_public_key FROM webhook_subscriptions WHERE id = ?`, w.ID).Scan(f.ctx, &stored); err != nil || stored != nil {
		t.Fatalf("previous public key after clearing: %v, %v; want NULL", stored, err)
	}
}

// A v1 subscription has no public key: 409, not 404; another workspace's
// or a missing subscription is not found.
func TestWebhookPublicKeyRefusals(t *testing.T) {
	f := newWebhookFixture(t)
	hooks := f.st.Webhooks()
	v1 := f.create(t, f.ws, true, models.EventTestCreated)
	if v1.SignatureScheme != models.SignatureV1 {
		t.Fatalf("default scheme %q, want v1", v1.SignatureScheme)
	}
	var me *models.Error
	if _, err := hooks.PublicKey(f.ctx, f.ws.WorkspaceID, v1.ID); !errors.As(err, &me) || me.Kind != models.ErrConflict {
		t.Fatalf("v1 subscription: %v, want a conflict", err)
	}
	// v1 rotations never gain a public key.
	pk := "whpk_x"
	if _, err := hooks.RotateSecret(f.ctx, f.ws.WorkspaceID, v1.ID, []byte("x"), &pk, 0); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a v1a key for a v1 subscription: %v, want not found", err)
	}
	v1a := f.createV1a(t, "whpk_a")
	for name, c := range map[string]struct{ ws, id uuid.UUID }{
		"another workspace's": {f.other.WorkspaceID, v1a.ID},
		"missing":             {f.ws.WorkspaceID, uuid.New()},
	} {
		if _, err := hooks.PublicKey(f.ctx, c.ws, c.id); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("%s subscription: %v, want not found", name, err)
		}
	}
	// The schema refuses a v1a subscription without a public key.
	if _, err := hooks.Create(f.ctx, uuid.New(), models.NewWebhook{WorkspaceID: f.ws.WorkspaceID, URL: "https://example.com/h",
		EventTypes: []models.EventType{models.EventTestCreated}, SignatureScheme: models.SignatureV1a}, f.sealed, 0); err == nil {
		t.Fatal("a v1a subscription without a public key was stored")
	}
}
