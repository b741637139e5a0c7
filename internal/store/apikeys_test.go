package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// keyFixture is a workspace with an admin and a member, each with the key
// Bootstrap/AddMember issued, on a fresh database.
type keyFixture struct {
	st     *store.Store
	keys   store.APIKeys
	admin  models.Principal
	member models.Principal
}

func newKeyFixture(t *testing.T) keyFixture {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	ctx := context.Background()
	a, err := st.Bootstrap(ctx, "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.AddMember(ctx, a.WorkspaceID, "member-"+uuid.NewString()[:8]+"@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return keyFixture{
		st:     st,
		keys:   st.APIKeys(),
		admin:  models.Principal{KeyID: a.APIKeyID, WorkspaceID: a.WorkspaceID, UserID: a.UserID, Role: models.RoleAdmin},
		member: models.Principal{KeyID: m.APIKeyID, WorkspaceID: m.WorkspaceID, UserID: m.UserID, Role: models.RoleMember},
	}
}

// opens reports whether secret authenticates at now, through the same path
// the API uses: the hash lookup, then the timestamp check.
func (f keyFixture) opens(t *testing.T, s string, now time.Time) bool {
	t.Helper()
	hash := secret.HashAPIKey(s)
	cred, err := f.st.CredentialByHash(context.Background(), hash)
	if errors.Is(err, models.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	_, ok := cred.Authenticate(hash, now)
	return ok
}

// create issues a key owned by p with the given expiry.
func (f keyFixture) create(t *testing.T, p models.Principal, expiresAt *time.Time, now time.Time) models.APIKey {
	t.Helper()
	k, err := f.keys.Create(context.Background(), models.NewAPIKey{
		WorkspaceID: p.WorkspaceID, UserID: p.UserID, ExpiresAt: expiresAt, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// row reads the stored columns the API never shows.
type storedKey struct {
	Status             string
	PreviousSecretHash []byte
	SecretHash         []byte
}

func (f keyFixture) stored(t *testing.T, id uuid.UUID) storedKey {
	t.Helper()
	var s storedKey
	err := f.st.DB().NewRaw(`SELECT status, previous_secret_hash, secret_hash FROM api_keys WHERE id = ?`, id).
		Scan(context.Background(), &s.Status, &s.PreviousSecretHash, &s.SecretHash)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func TestAPIKeyCreateListGetRename(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now()
	exp := now.Add(time.Hour)
	k, err := f.keys.Create(ctx, models.NewAPIKey{
		WorkspaceID: f.member.WorkspaceID, UserID: f.member.UserID, Name: ptr("ci"), ExpiresAt: &exp, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	if k.Secret == "" || k.SecureKey == k.Secret || k.SecureKey != secret.APIKeyHint(k.Secret) {
		t.Fatalf("secret %q, secureKey %q: want the secret once and the hint stored", k.Secret, k.SecureKey)
	}
	if !f.opens(t, k.Secret, now) || f.opens(t, k.Secret, exp) {
		t.Fatal("the new key must open until its expiry and not at it")
	}

	got, err := f.keys.Get(ctx, f.member, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != "" || *got.Name != "ci" || !got.ExpiresAt.Equal(*k.ExpiresAt) || !got.DateCreated.Equal(k.DateCreated) {
		t.Fatalf("get returned %+v, created %+v", got, k)
	}
	if _, err := f.keys.Get(ctx, f.admin, k.ID); err != nil {
		t.Fatalf("an admin sees every key of the workspace: %v", err)
	}
	other := f.member
	other.UserID = uuid.New()
	if _, err := f.keys.Get(ctx, other, k.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another member's key: %v, want not found", err)
	}
	elsewhere := f.admin
	elsewhere.WorkspaceID = uuid.New()
	if _, err := f.keys.Get(ctx, elsewhere, k.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("an admin of another workspace: %v, want not found", err)
	}

	mine, err := f.keys.List(ctx, f.member)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != 2 || mine[0].ID != k.ID || mine[1].ID != f.member.KeyID {
		t.Fatalf("member lists %v, want its two keys newest first", ids(mine))
	}
	all, err := f.keys.List(ctx, f.admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].ID != k.ID {
		t.Fatalf("admin lists %v, want all three keys newest first", ids(all))
	}

	later := now.Add(time.Minute)
	renamed, err := f.keys.Rename(ctx, f.admin, k.ID, nil, later)
	if err != nil {
		t.Fatal(err)
	}
	if renamed.Name != nil || !renamed.DateUpdated.Equal(later.UTC().Truncate(time.Microsecond)) {
		t.Fatalf("rename to null: %+v", renamed)
	}
	if _, err := f.keys.Rename(ctx, other, k.ID, ptr("x"), later); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("rename of an invisible key: %v, want not found", err)
	}
}

func ids(keys []models.APIKey) []uuid.UUID {
	out := make([]uuid.UUID, len(keys))
	for i, k := range keys {
		out[i] = k.ID
	}
	return out
}

func TestAPIKeyRevokeStopsEverySecret(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now()
	k := f.create(t, f.member, nil, now)
	rotated, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Grace: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !f.opens(t, k.Secret, now) || !f.opens(t, rotated.Secret, now) {
		t.Fatal("during the grace period both secrets open the key")
	}
	other := f.member
	other.UserID = uuid.New()
	if err := f.keys.Revoke(ctx, other, k.ID, now); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("revoke by a stranger: %v, want not found", err)
	}
	if err := f.keys.Revoke(ctx, f.admin, k.ID, now); err != nil {
		t.Fatal(err)
	}
	if f.opens(t, k.Secret, now) || f.opens(t, rotated.Secret, now) {
		t.Fatal("a revoked key must not open with either secret")
	}
	if s := f.stored(t, k.ID); s.PreviousSecretHash != nil {
		t.Fatal("revoke must erase the previous hash")
	}
	if err := f.keys.Revoke(ctx, f.admin, k.ID, now); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("second revoke: %v, want not found", err)
	}
	if _, err := f.keys.Get(ctx, f.admin, k.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("get of a revoked key: %v, want not found", err)
	}
	if _, err := f.keys.Rotate(ctx, f.admin, k.ID, models.APIKeyRotation{Now: now}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("rotate of a revoked key: %v, want not found", err)
	}
	list, err := f.keys.List(ctx, f.admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.ID == k.ID {
			t.Fatal("a revoked key is listed")
		}
	}
}

func TestAPIKeyRotate(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	exp := now.Add(2 * time.Hour)
	k := f.create(t, f.member, &exp, now)

	// Grace 0: the old secret stops at once, the key stays active.
	r1, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if r1.ID != k.ID || r1.PreviousKeyExpiresAt != nil || r1.Status != models.KeyActive || !r1.LastRotatedAt.Equal(now) || !r1.ExpiresAt.Equal(exp) {
		t.Fatalf("rotation without grace: %+v", r1)
	}
	if f.opens(t, k.Secret, now) || !f.opens(t, r1.Secret, now) {
		t.Fatal("without grace only the new secret opens")
	}

	// Grace beyond the expiry is capped by it.
	r2, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Grace: 5 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Status != models.KeyRotating || !r2.PreviousKeyExpiresAt.Equal(exp) {
		t.Fatalf("grace past the expiry: previousKeyExpiresAt %v, want %v", r2.PreviousKeyExpiresAt, exp)
	}

	// Rotating during grace retires the older previous secret at once, and
	// may clear the expiry.
	r3, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{SetExpiry: true, Grace: time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if r3.ExpiresAt != nil || !r3.PreviousKeyExpiresAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("rotation clearing the expiry: %+v", r3)
	}
	if f.opens(t, r1.Secret, now) || !f.opens(t, r2.Secret, now) || !f.opens(t, r3.Secret, now) {
		t.Fatal("after a second rotation during grace: r1 must be dead, r2 (previous) and r3 alive")
	}
	if f.opens(t, r2.Secret, now.Add(time.Minute)) || !f.opens(t, r3.Secret, now.Add(time.Minute)) {
		t.Fatal("the previous secret must stop at previousKeyExpiresAt")
	}

	// A past expiry is refused even if the API let it through.
	if _, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{SetExpiry: true, ExpiresAt: &now, Now: now}); !errors.Is(err, models.ErrInvalid) {
		t.Fatalf("rotation to a past expiry: %v, want invalid", err)
	}
}

func TestAPIKeyRotateExpiredConflicts(t *testing.T) {
	f := newKeyFixture(t)
	now := time.Now()
	exp := now.Add(time.Second)
	k := f.create(t, f.member, &exp, now)
	_, err := f.keys.Rotate(context.Background(), f.member, k.ID, models.APIKeyRotation{SetExpiry: true, Now: exp})
	var me *models.Error
	if !errors.As(err, &me) || !errors.Is(err, models.ErrConflict) || me.Code != "api_key_expired" {
		t.Fatalf("rotating an expired key: %v, want conflict api_key_expired", err)
	}
	if s := f.stored(t, k.ID); !bytes.Equal(s.SecretHash, secret.HashAPIKey(k.Secret)) {
		t.Fatal("a refused rotation must not change the secret")
	}
}

func TestAPIKeyApplyDueTransitions(t *testing.T) {
	f := newKeyFixture(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	exp := now.Add(time.Hour)
	k := f.create(t, f.member, &exp, now)
	r, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Grace: 10 * time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	graceEnd := now.Add(10 * time.Minute)

	// Before the deadline nothing is due: no write, the schedule is read.
	s, err := f.keys.ApplyDueTransitions(ctx, k.ID, graceEnd.Add(-time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if s.Changed || s.Status != models.KeyRotating || !s.PreviousKeyExpiresAt.Equal(graceEnd) || !s.NextDeadline().Equal(graceEnd) {
		t.Fatalf("before the end of grace: %+v", s)
	}

	// At the deadline the previous hash goes and the key is active again;
	// a retry writes nothing.
	for i, wantChanged := range []bool{true, false} {
		s, err = f.keys.ApplyDueTransitions(ctx, k.ID, graceEnd)
		if err != nil {
			t.Fatal(err)
		}
		if s.Changed != wantChanged || s.Status != models.KeyActive || s.PreviousKeyExpiresAt != nil || !s.NextDeadline().Equal(exp) {
			t.Fatalf("end of grace, call %d: %+v", i+1, s)
		}
	}
	if st := f.stored(t, k.ID); st.Status != "active" || st.PreviousSecretHash != nil {
		t.Fatalf("after the end of grace the row holds %+v", st)
	}

	// A late call for the old deadline after a newer rotation must not touch
	// the newer previous secret.
	r2, err := f.keys.Rotate(ctx, f.member, k.ID, models.APIKeyRotation{Grace: 20 * time.Minute, Now: graceEnd})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = f.keys.ApplyDueTransitions(ctx, k.ID, graceEnd.Add(time.Second)); err != nil || s.Changed || s.Status != models.KeyRotating {
		t.Fatalf("stale call after a newer rotation: %+v, %v", s, err)
	}
	if !f.opens(t, r.Secret, graceEnd.Add(time.Second)) || !f.opens(t, r2.Secret, graceEnd.Add(time.Second)) {
		t.Fatal("the newer rotation's previous secret must survive a stale transition")
	}

	// At the expiry the key is expired and its previous hash erased.
	s, err = f.keys.ApplyDueTransitions(ctx, k.ID, exp)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Changed || s.Status != models.KeyExpired || s.PreviousKeyExpiresAt != nil {
		t.Fatalf("at the expiry: %+v", s)
	}
	if st := f.stored(t, k.ID); st.Status != "expired" || st.PreviousSecretHash != nil {
		t.Fatalf("after the expiry the row holds %+v", st)
	}

	// Revoked and missing keys are reported as such, without writing.
	if err := f.keys.Revoke(ctx, f.admin, k.ID, exp); err != nil {
		t.Fatal(err)
	}
	if s, err = f.keys.ApplyDueTransitions(ctx, k.ID, exp); err != nil || !s.Found || !s.Revoked || s.Changed {
		t.Fatalf("revoked key: %+v, %v", s, err)
	}
	if s, err = f.keys.ApplyDueTransitions(ctx, uuid.New(), exp); err != nil || s.Found {
		t.Fatalf("missing key: %+v, %v", s, err)
	}
}
