package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// portalSession mints a session of the fixture's workspace.
func (f *webhookFixture) portalSession(t *testing.T) models.PortalSession {
	t.Helper()
	var keyHash []byte
	if err := f.st.DB().NewRaw(`SELECT secret_hash FROM api_keys WHERE id = ?`, f.ws.APIKeyID).Scan(f.ctx, &keyHash); err != nil {
		t.Fatal(err)
	}
	s, _, err := f.st.PortalSessions().Create(f.ctx, models.NewPortalSession{ID: uuid.New(), WorkspaceID: f.ws.WorkspaceID,
		CreatedBy: f.ws.UserID, APIKeyID: f.ws.APIKeyID, APIKeySecretHash: keyHash, TokenHash: uuid.New().NodeID(),
		ExpiresAt: time.Now().Add(time.Hour)}, time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A form token is claimed once; a later claim sees the first one's
// redirect, or nothing while it runs; a released token, or a claim left
// in progress past its lease, is claimed again.
func TestPortalFormsClaim(t *testing.T) {
	f := newWebhookFixture(t)
	s, forms, now := f.portalSession(t), f.st.PortalForms(), time.Now()
	hash := []byte("token-hash")
	first, err := forms.Claim(f.ctx, s.ID, hash, now)
	if err != nil || !first.Claimed {
		t.Fatalf("first claim: %+v %v", first, err)
	}
	if c, err := forms.Claim(f.ctx, s.ID, hash, now.Add(time.Second)); err != nil || c.Claimed || c.Location != "" {
		t.Errorf("claim while the first runs: %+v %v, want neither claimed nor done", c, err)
	}
	if c, err := forms.Claim(f.ctx, uuid.Nil, hash, now); err == nil {
		t.Errorf("a claim for no session: %+v, want the foreign key's error", c)
	}
	if err := forms.Release(f.ctx, s.ID, hash, first.ClaimedAt); err != nil {
		t.Fatal(err)
	}
	second, err := forms.Claim(f.ctx, s.ID, hash, now.Add(2*time.Second))
	if err != nil || !second.Claimed {
		t.Fatalf("claim after release: %+v %v", second, err)
	}
	// The first claim is gone: settling through it reports so and
	// changes nothing.
	if err := forms.Complete(f.ctx, s.ID, hash, first.ClaimedAt, "/stale"); !errors.Is(err, store.ErrFormClaimLost) {
		t.Fatalf("Complete through a lost claim: %v, want ErrFormClaimLost", err)
	}
	if err := forms.Release(f.ctx, s.ID, hash, first.ClaimedAt); !errors.Is(err, store.ErrFormClaimLost) {
		t.Fatalf("Release through a lost claim: %v, want ErrFormClaimLost", err)
	}
	if err := forms.Complete(f.ctx, s.ID, hash, second.ClaimedAt, "/portal/done"); err != nil {
		t.Fatal(err)
	}
	if c, err := forms.Claim(f.ctx, s.ID, hash, now.Add(time.Hour)); err != nil || c.Claimed || c.Location != "/portal/done" {
		t.Errorf("claim after completion: %+v %v, want the first result", c, err)
	}
	abandoned := []byte("abandoned")
	left, err := forms.Claim(f.ctx, s.ID, abandoned, now)
	if err != nil || !left.Claimed {
		t.Fatalf("claim: %+v %v", left, err)
	}
	taken, err := forms.Claim(f.ctx, s.ID, abandoned, now.Add(16*time.Second))
	if err != nil || !taken.Claimed {
		t.Fatalf("claim past the lease of one in progress: %+v %v, want it taken over", taken, err)
	}
	if err := forms.Complete(f.ctx, s.ID, abandoned, left.ClaimedAt, "/late"); !errors.Is(err, store.ErrFormClaimLost) {
		t.Errorf("the first claim completing after the takeover: %v, want ErrFormClaimLost", err)
	}
	if err := forms.Complete(f.ctx, s.ID, abandoned, taken.ClaimedAt, "/portal/taken"); err != nil {
		t.Errorf("the takeover completing: %v", err)
	}
}

// A stashed secret is read once, before it expires, by its session only.
func TestPortalFormsStash(t *testing.T) {
	f := newWebhookFixture(t)
	s, forms, now := f.portalSession(t), f.st.PortalForms(), time.Now()
	sub := f.create(t, f.ws, true, models.EventTestCreated)
	if err := forms.Stash(f.ctx, s.ID, sub.ID, []byte("sealed"), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := forms.TakeStash(f.ctx, f.portalSession(t).ID, sub.ID, now); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("another session's read: %v, want not found", err)
	}
	if got, err := forms.TakeStash(f.ctx, s.ID, sub.ID, now); err != nil || string(got) != "sealed" {
		t.Fatalf("read: %q %v", got, err)
	}
	if _, err := forms.TakeStash(f.ctx, s.ID, sub.ID, now); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("second read: %v, want not found", err)
	}
	if err := forms.Stash(f.ctx, s.ID, sub.ID, []byte("sealed"), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := forms.TakeStash(f.ctx, s.ID, sub.ID, now.Add(2*time.Minute)); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("read after expiry: %v, want not found", err)
	}
}
