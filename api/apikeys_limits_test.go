package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// farFuture is a valid RFC 3339 instant whose UTC form is in year 10000:
// time.Parse accepts it, PostgreSQL stores it, but encoding/json cannot
// marshal it and pgdriver cannot read it back.
const farFuture = "9999-12-31T23:59:59-23:00"

// An expiresAt past year 9999 (in UTC) is refused. Accepted, it was stored
// but could not be encoded: the 201 lost the secret, and every list holding
// the key (the admin's too) answered 500.
func TestAPIKeyCreateExpiryPastYear9999(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)

	rec := h.do(http.MethodPost, h.keysPath(), member.Secret, map[string]any{"expiresAt": farFuture})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("create with expiresAt %s: status %d body %q; want 400 validation_failed", farFuture, rec.Code, rec.Body)
	}
	if rec := h.do(http.MethodGet, h.keysPath(), h.admin.Secret, nil); rec.Code != http.StatusOK {
		t.Errorf("admin's GET api-keys after a member's create: %d %s; want 200", rec.Code, rec.Body)
	}
	if rec := h.do(http.MethodGet, h.keysPath(), member.Secret, nil); rec.Code != http.StatusOK {
		t.Errorf("member's GET api-keys: %d %s; want 200", rec.Code, rec.Body)
	}
}

// The same through rotate: accepted, the rotation committed (the old secret
// stopped at once) while the 200 had no body, so the key was bricked.
func TestAPIKeyRotateExpiryPastYear9999(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)

	rec := h.do(http.MethodPost, h.keysPath(member.APIKeyID.String(), "rotate"), member.Secret,
		map[string]any{"expiresAt": farFuture})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("rotate with expiresAt %s: status %d body %q; want 400", farFuture, rec.Code, rec.Body)
	}
	if got := h.authStatus(member.Secret); got != http.StatusOK {
		t.Errorf("after the refused rotation the key's secret answers %d; want it still working (200)", got)
	}
}

// Rule 4 holds for rotations too: an expiring key that rotates another key
// without sending expiresAt would receive that key's new, never-expiring
// secret (an admin's short-lived CI key minting a permanent credential), so
// the rotation is refused with 400 when the kept expiry outlives the caller.
func TestExpiringKeyCannotMintImmortalSecretByRotation(t *testing.T) {
	h := newHarness(t)
	now := time.Now()
	soon := now.Add(time.Hour)
	shortLived := h.issueKey(h.admin, &soon, now) // the admin's key, expires in an hour
	member := h.addKey(models.RoleMember)         // never expires

	rec := h.do(http.MethodPost, h.keysPath(member.APIKeyID.String(), "rotate"), shortLived.Secret, nil)
	if rec.Code == http.StatusOK {
		var k models.APIKey
		mustDecode(t, rec.Body.Bytes(), &k)
		if k.ExpiresAt == nil {
			t.Fatalf("a key expiring at %s obtained a never-expiring secret (%s) by rotating another key",
				soon.UTC().Format(time.RFC3339), k.SecureKey[:8]+"...")
		}
	}
}

// The create and rotate responses carry the full secret (in secret and
// secureKey), so like the webhook creation result they are marked
// Cache-Control: no-store.
func TestAPIKeySecretResponsesAreNotCached(t *testing.T) {
	h := newHarness(t)
	rec := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{"name": "ci"})
	if rec.Code != http.StatusCreated || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("create: %d, Cache-Control %q; want 201 with no-store", rec.Code, rec.Header().Get("Cache-Control"))
	}
	rec = h.do(http.MethodPost, h.keysPath(h.admin.APIKeyID.String(), "rotate"), h.admin.Secret, map[string]any{"gracePeriodSeconds": 60})
	if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("rotate: %d, Cache-Control %q; want 200 with no-store", rec.Code, rec.Header().Get("Cache-Control"))
	}
}
