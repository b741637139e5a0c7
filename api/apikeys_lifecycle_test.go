package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

var apiKeyFields = []string{"id", "name", "dateCreated", "dateUpdated", "dateLastUsed", "secureKey",
	"status", "expiresAt", "lastRotatedAt", "previousKeyExpiresAt"}

// checkShape requires every ApiKey member, and secret only when withSecret.
func checkShape(t *testing.T, raw []byte, withSecret bool) {
	t.Helper()
	m := members(t, raw)
	for _, f := range apiKeyFields {
		if _, ok := m[f]; !ok {
			t.Errorf("member %q missing from %s", f, raw)
		}
	}
	if _, ok := m["secret"]; ok != withSecret {
		t.Errorf("secret present: %v, want %v, in %s", ok, withSecret, raw)
	}
}

// status is the status code of a GET of the key list with key.
func (h *harness) authStatus(key string) int {
	h.t.Helper()
	return h.do("GET", h.keysPath(), key, nil).Code
}

// The whole life of a key through the router, on a pinned clock. There is
// no Temporal here: every state the API shows comes from the timestamps.
func TestAPIKeyLifecycle(t *testing.T) {
	h := newHarness(t)
	// A minute ahead, so keys made through the API are newer than the
	// member's first key, which the store stamps with the real time.
	t0 := time.Now().UTC().Truncate(time.Second).Add(time.Minute)
	h.clock.Set(t0)
	member := h.addKey(models.RoleMember)

	rec := h.do("POST", h.keysPath(), member.Secret, map[string]any{"name": "ci"})
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	checkShape(t, rec.Body.Bytes(), true)
	var k models.APIKey
	mustDecode(t, rec.Body.Bytes(), &k)
	if k.Secret == "" || k.SecureKey != k.Secret || k.Status != models.KeyActive || *k.Name != "ci" ||
		k.ExpiresAt != nil || !k.DateCreated.Equal(t0) || k.LastRotatedAt != nil || k.PreviousKeyExpiresAt != nil {
		t.Fatalf("created key %+v", k)
	}

	// Read back: the hint, never the secret; the new key authenticates.
	rec = h.do("GET", h.keysPath(k.ID.String()), k.Secret, nil)
	if rec.Code != 200 {
		t.Fatalf("get with the new key: %d %s", rec.Code, rec.Body)
	}
	checkShape(t, rec.Body.Bytes(), false)
	var got models.APIKey
	mustDecode(t, rec.Body.Bytes(), &got)
	if got.SecureKey != secret.APIKeyHint(k.Secret) || got.ID != k.ID {
		t.Fatalf("get: %+v", got)
	}

	// The list is a bare array, newest first; a member sees its own keys,
	// an admin all of them.
	h.clock.Set(t0.Add(time.Second))
	var second models.APIKey
	h.doJSON("POST", h.keysPath(), member.Secret, nil, 201, &second)
	rec = h.do("GET", h.keysPath(), member.Secret, nil)
	if rec.Code != 200 || !bytes.HasPrefix(rec.Body.Bytes(), []byte("[")) || strings.Contains(rec.Body.String(), `"secret"`) {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	var list []models.APIKey
	mustDecode(t, rec.Body.Bytes(), &list)
	if len(list) != 3 || list[0].ID != second.ID || list[1].ID != k.ID || list[2].ID != member.APIKeyID {
		t.Fatalf("member's list: %d keys %+v", len(list), list)
	}
	h.doJSON("GET", h.keysPath(), h.admin.Secret, nil, 200, &list)
	if len(list) != 4 {
		t.Fatalf("admin's list has %d keys, want 4", len(list))
	}

	// Rename.
	h.clock.Set(t0.Add(time.Minute))
	h.doJSON("PUT", h.keysPath(k.ID.String()), member.Secret, map[string]any{"name": "deploy"}, 200, &got)
	if *got.Name != "deploy" || !got.DateUpdated.Equal(t0.Add(time.Minute)) || got.Secret != "" {
		t.Fatalf("renamed: %+v", got)
	}

	// Rotate with an hour of grace: same id and name, a new secret, both work.
	rec = h.do("POST", h.keysPath(k.ID.String(), "rotate"), member.Secret, map[string]any{"gracePeriodHours": 1})
	if rec.Code != 200 {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	checkShape(t, rec.Body.Bytes(), true)
	var r models.APIKey
	mustDecode(t, rec.Body.Bytes(), &r)
	graceEnd := t0.Add(time.Minute + time.Hour)
	if r.ID != k.ID || *r.Name != "deploy" || r.Secret == k.Secret || r.SecureKey != r.Secret || r.Status != models.KeyRotating ||
		!r.PreviousKeyExpiresAt.Equal(graceEnd) || !r.LastRotatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("rotated: %+v", r)
	}
	if h.authStatus(k.Secret) != 200 || h.authStatus(r.Secret) != 200 {
		t.Fatal("during grace both secrets must authenticate")
	}

	// At the end of grace the old secret stops and the key reads active,
	// although nothing moved the stored status.
	h.clock.Set(graceEnd)
	if h.authStatus(k.Secret) != 401 || h.authStatus(r.Secret) != 200 {
		t.Fatal("after grace only the new secret may authenticate")
	}
	h.doJSON("GET", h.keysPath(k.ID.String()), member.Secret, nil, 200, &got)
	if got.Status != models.KeyActive || got.PreviousKeyExpiresAt != nil {
		t.Fatalf("after grace the key reads %s (previousKeyExpiresAt %v)", got.Status, got.PreviousKeyExpiresAt)
	}

	// Rotate without a body: no grace, the old secret stops at once.
	var r2 models.APIKey
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), member.Secret, nil, 200, &r2)
	if r2.Status != models.KeyActive || r2.PreviousKeyExpiresAt != nil || h.authStatus(r.Secret) != 401 || h.authStatus(r2.Secret) != 200 {
		t.Fatalf("rotation without grace: %+v", r2)
	}

	// An admin may rotate a member's key; then delete stops both secrets.
	var r3 models.APIKey
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, map[string]any{"gracePeriodSeconds": 600}, 200, &r3)
	if h.authStatus(r2.Secret) != 200 || h.authStatus(r3.Secret) != 200 {
		t.Fatal("during grace both secrets must authenticate")
	}
	if rec = h.do("DELETE", h.keysPath(k.ID.String()), member.Secret, nil); rec.Code != 204 || rec.Body.Len() != 0 {
		t.Fatalf("delete: %d %q", rec.Code, rec.Body)
	}
	if h.authStatus(r2.Secret) != 401 || h.authStatus(r3.Secret) != 401 {
		t.Fatal("after delete no secret of the key may authenticate")
	}
	h.doJSON("GET", h.keysPath(k.ID.String()), h.admin.Secret, nil, 404, nil)

	// A key may revoke itself: answered, then refused.
	h.doJSON("DELETE", h.keysPath(second.ID.String()), second.Secret, nil, 204, nil)
	if h.authStatus(second.Secret) != 401 {
		t.Fatal("a key that revoked itself still authenticates")
	}
}

// The four expiresAt rules of create, and rotate's expiry handling.
func TestAPIKeyExpiryRules(t *testing.T) {
	h := newHarness(t)
	t0 := time.Now().UTC().Truncate(time.Second)
	h.clock.Set(t0)
	callerExp := t0.Add(24 * time.Hour)
	caller := h.issueKey(h.admin, &callerExp, t0)
	at := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }

	var k models.APIKey
	h.doJSON("POST", h.keysPath(), caller.Secret, nil, 201, &k)
	if k.ExpiresAt == nil || !k.ExpiresAt.Equal(callerExp) {
		t.Fatalf("omitted expiresAt: %v, want the caller's %v", k.ExpiresAt, callerExp)
	}
	h.doJSON("POST", h.keysPath(), caller.Secret, map[string]any{"expiresAt": at(time.Hour)}, 201, &k)
	if !k.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("explicit expiresAt: %v", k.ExpiresAt)
	}
	h.doJSON("POST", h.keysPath(), caller.Secret, map[string]any{"expiresAt": callerExp.Format(time.RFC3339Nano)}, 201, &k)
	h.doJSON("POST", h.keysPath(), h.admin.Secret, `{"expiresAt": null}`, 201, &k)
	if k.ExpiresAt != nil {
		t.Fatalf("null expiresAt: %v, want never", k.ExpiresAt)
	}
	h.doJSON("POST", h.keysPath(), h.admin.Secret, nil, 201, &k)
	if k.ExpiresAt != nil {
		t.Fatalf("omitted expiresAt with a caller that never expires: %v", k.ExpiresAt)
	}

	// Rotate: omitted keeps, a value replaces, null clears; grace stops at
	// the expiry.
	var r models.APIKey
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, map[string]any{"expiresAt": at(2 * time.Hour), "gracePeriodHours": 5}, 200, &r)
	if !r.ExpiresAt.Equal(t0.Add(2*time.Hour)) || !r.PreviousKeyExpiresAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("rotation to a 2h expiry with 5h grace: expiresAt %v previousKeyExpiresAt %v", r.ExpiresAt, r.PreviousKeyExpiresAt)
	}
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, nil, 200, &r)
	if !r.ExpiresAt.Equal(t0.Add(2 * time.Hour)) {
		t.Fatalf("omitted expiresAt on rotate: %v, want kept", r.ExpiresAt)
	}
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, `{"expiresAt": null}`, 200, &r)
	if r.ExpiresAt != nil {
		t.Fatalf("null expiresAt on rotate: %v, want cleared", r.ExpiresAt)
	}

	// At its instant a key stops and reads expired, and cannot be rotated.
	h.doJSON("POST", h.keysPath(), h.admin.Secret, map[string]any{"expiresAt": at(time.Minute)}, 201, &k)
	h.clock.Set(t0.Add(time.Minute))
	if h.authStatus(k.Secret) != 401 {
		t.Fatal("an expired key authenticates")
	}
	h.doJSON("GET", h.keysPath(k.ID.String()), h.admin.Secret, nil, 200, &k)
	if k.Status != models.KeyExpired {
		t.Fatalf("status %s at the expiry, want expired", k.Status)
	}
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, nil, 409, nil)
}

// Temporal being down never fails a change: the API never calls it for
// one. Each change is recorded in the key's outbox by its own statement,
// for the worker's relay to tell the key's workflow.
func TestAPIKeyChangesSurviveTemporalOutage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	tc, err := client.NewLazyClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	h := newHarness(t, func(d *api.Deps) { d.Temporal = tc })

	var k, r models.APIKey
	h.doJSON("POST", h.keysPath(), h.admin.Secret, map[string]any{"expiresAt": time.Now().Add(time.Hour).Format(time.RFC3339)}, 201, &k)
	h.doJSON("POST", h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, map[string]any{"gracePeriodSeconds": 60}, 200, &r)
	if h.authStatus(k.Secret) != 200 || h.authStatus(r.Secret) != 200 {
		t.Fatal("both secrets must work during grace")
	}
	h.doJSON("DELETE", h.keysPath(k.ID.String()), h.admin.Secret, nil, 204, nil)
	if h.authStatus(r.Secret) != 401 {
		t.Fatal("a revoked key authenticates")
	}
	var seq, synced int64
	if err := h.db.NewRaw(`SELECT lifecycle_seq, lifecycle_synced_seq FROM api_keys WHERE id = ?`, k.ID).
		Scan(context.Background(), &seq, &synced); err != nil {
		t.Fatal(err)
	}
	if seq != 3 || synced != 0 {
		t.Errorf("lifecycle_seq %d, synced %d: want the three changes pending", seq, synced)
	}
}

func mustDecode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
