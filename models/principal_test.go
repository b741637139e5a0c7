package models

import (
	"testing"
	"time"
)

// The previous secret of a rotation authenticates as a weaker principal:
// flagged, and expiring at the end of its grace period (or the key's own
// expiry, whichever comes first), so nothing it does can outlive it.
func TestPreviousSecretPrincipal(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	graceEnd, expiry := now.Add(time.Hour), now.Add(2*time.Hour)
	cur, prev := []byte("current-hash"), []byte("previous-hash")
	for _, c := range []struct {
		name      string
		expiresAt *time.Time
		hash      []byte
		previous  bool
		want      *time.Time
	}{
		{"current, never expires", nil, cur, false, nil},
		{"current, expiring", &expiry, cur, false, &expiry},
		{"previous, key never expires", nil, prev, true, &graceEnd},
		{"previous, key expires later", &expiry, prev, true, &graceEnd},
		{"previous, key expires first", &graceEnd, prev, true, &graceEnd},
	} {
		end := graceEnd
		cred := KeyCredential{SecretHash: cur, PreviousSecretHash: prev, PreviousKeyExpiresAt: &end, ExpiresAt: c.expiresAt, Role: RoleAdmin}
		p, ok := cred.Authenticate(c.hash, now)
		if !ok {
			t.Fatalf("%s: refused", c.name)
		}
		if p.PreviousSecret != c.previous || (p.KeyExpiresAt == nil) != (c.want == nil) || (c.want != nil && !p.KeyExpiresAt.Equal(*c.want)) {
			t.Errorf("%s: previous %v, expires %v; want %v, %v", c.name, p.PreviousSecret, p.KeyExpiresAt, c.previous, c.want)
		}
	}
}
