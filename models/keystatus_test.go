package models

import (
	"crypto/sha256"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

func at(t time.Time) *time.Time { return &t }

func TestKeyStatusAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ns := time.Nanosecond
	cases := []struct {
		name          string
		expires, prev *time.Time
		want          KeyStatus
	}{
		{"no deadlines", nil, nil, KeyActive},
		{"expiry ahead", at(now.Add(time.Hour)), nil, KeyActive},
		{"a nanosecond before expiry", at(now.Add(ns)), nil, KeyActive},
		{"exactly at expiry", at(now), nil, KeyExpired},
		{"a nanosecond past expiry", at(now.Add(-ns)), nil, KeyExpired},
		{"grace ahead", nil, at(now.Add(time.Minute)), KeyRotating},
		{"a nanosecond before the grace ends", nil, at(now.Add(ns)), KeyRotating},
		{"exactly at the end of grace", nil, at(now), KeyActive},
		{"grace over", nil, at(now.Add(-time.Minute)), KeyActive},
		{"rotating with an expiry ahead", at(now.Add(time.Hour)), at(now.Add(time.Minute)), KeyRotating},
		{"expired during grace: expiry wins", at(now), at(now.Add(time.Minute)), KeyExpired},
		{"expired after grace", at(now.Add(-time.Hour)), at(now.Add(-2 * time.Hour)), KeyExpired},
		{"same instant in another zone", at(now.In(time.FixedZone("X", 5*3600))), nil, KeyExpired},
	}
	for _, c := range cases {
		if got := KeyStatusAt(now, c.expires, c.prev); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestWithStatusAtHidesAnEndedGrace(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	k := APIKey{Status: KeyActive, PreviousKeyExpiresAt: at(now.Add(time.Minute))}
	if got := k.WithStatusAt(now); got.Status != KeyRotating || got.PreviousKeyExpiresAt == nil {
		t.Errorf("during grace: %s %v", got.Status, got.PreviousKeyExpiresAt)
	}
	if got := k.WithStatusAt(now.Add(time.Minute)); got.Status != KeyActive || got.PreviousKeyExpiresAt != nil {
		t.Errorf("after grace: %s %v, want active and no previousKeyExpiresAt", got.Status, got.PreviousKeyExpiresAt)
	}
	k.ExpiresAt = at(now)
	if got := k.WithStatusAt(now); got.Status != KeyExpired || got.PreviousKeyExpiresAt != nil {
		t.Errorf("expired: %s %v", got.Status, got.PreviousKeyExpiresAt)
	}
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func TestKeyCredentialAuthenticate(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	cur, prev := hash("current"), hash("previous")
	base := KeyCredential{
		KeyID: uuid.New(), WorkspaceID: uuid.New(), UserID: uuid.New(), Role: RoleMember,
		SecretHash: cur, DateLastUsed: at(now.Add(-time.Hour)),
	}
	rotating := base
	rotating.PreviousSecretHash, rotating.PreviousKeyExpiresAt = prev, at(now.Add(time.Minute))

	with := func(c KeyCredential, f func(*KeyCredential)) KeyCredential { f(&c); return c }
	cases := []struct {
		name string
		cred KeyCredential
		hash []byte
		ok   bool
	}{
		{"current secret", base, cur, true},
		{"unknown secret", base, hash("other"), false},
		{"truncated hash", base, cur[:16], false},
		{"no hash", base, nil, false},
		{"no hash against a credential without hashes", KeyCredential{}, nil, false},
		{"empty hash against a credential without hashes", KeyCredential{SecretHash: []byte{}}, []byte{}, false},
		{"previous secret without a rotation", base, prev, false},
		{"current secret while rotating", rotating, cur, true},
		{"previous secret during grace", rotating, prev, true},
		{"previous secret at the end of grace", with(rotating, func(c *KeyCredential) { c.PreviousKeyExpiresAt = at(now) }), prev, false},
		{"previous secret after grace", with(rotating, func(c *KeyCredential) { c.PreviousKeyExpiresAt = at(now.Add(-time.Second)) }), prev, false},
		{"previous hash with no deadline", with(rotating, func(c *KeyCredential) { c.PreviousKeyExpiresAt = nil }), prev, false},
		{"current secret, expiry ahead", with(base, func(c *KeyCredential) { c.ExpiresAt = at(now.Add(time.Second)) }), cur, true},
		{"current secret at expiry", with(base, func(c *KeyCredential) { c.ExpiresAt = at(now) }), cur, false},
		{"previous secret of an expired key", with(rotating, func(c *KeyCredential) { c.ExpiresAt = at(now.Add(-time.Second)) }), prev, false},
		{"revoked key", with(base, func(c *KeyCredential) { c.RevokedAt = at(now.Add(-time.Second)) }), cur, false},
		{"revoked in the future still counts as revoked", with(base, func(c *KeyCredential) { c.RevokedAt = at(now.Add(time.Hour)) }), cur, false},
	}
	for _, c := range cases {
		p, ok := c.cred.Authenticate(c.hash, now)
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.name, ok, c.ok)
			continue
		}
		if !ok && !reflect.DeepEqual(p, Principal{}) {
			t.Errorf("%s: refused but returned a principal %+v", c.name, p)
		}
	}

	exp := at(now.Add(time.Hour))
	cred := with(rotating, func(c *KeyCredential) { c.ExpiresAt = exp; c.Role = RoleAdmin })
	p, ok := cred.Authenticate(prev, now)
	// The previous secret expires with its grace period, before the key.
	want := Principal{KeyID: cred.KeyID, WorkspaceID: cred.WorkspaceID, UserID: cred.UserID, Role: RoleAdmin,
		KeyExpiresAt: cred.PreviousKeyExpiresAt, DateLastUsed: cred.DateLastUsed, PreviousSecret: true, SecretHash: prev}
	if !ok || !reflect.DeepEqual(p, want) || !p.IsAdmin() {
		t.Errorf("principal %+v (ok %v), want %+v", p, ok, want)
	}
}
