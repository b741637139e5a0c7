package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// keysPath is the API keys collection of the harness's workspace, or one
// key's path under it.
func (h *harness) keysPath(rest ...string) string {
	p := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/api-keys"
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// issueKey creates a key for owner straight in the store, so tests choose
// any expiry, past ones included.
func (h *harness) issueKey(owner store.Credentials, expiresAt *time.Time, now time.Time) models.APIKey {
	h.t.Helper()
	k, err := h.store.APIKeys().Create(context.Background(), models.NewAPIKey{
		WorkspaceID: owner.WorkspaceID, UserID: owner.UserID, ExpiresAt: expiresAt, Now: now,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return k
}

// members returns the JSON object's member names.
func members(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// Every bad request is a 4xx in the one error shape, naming the field.
func TestAPIKeyBadRequests(t *testing.T) {
	h := newHarness(t)
	now := time.Now()
	member := h.addKey(models.RoleMember)
	other := h.addKey(models.RoleMember)
	othersKey := h.issueKey(other, nil, now)
	soon := now.Add(time.Hour)
	expiring := h.issueKey(h.admin, &soon, now) // a caller that expires in an hour
	past := now.Add(-time.Hour)
	expired := h.issueKey(member, &past, now.Add(-2*time.Hour))
	own := h.issueKey(member, nil, now).ID.String()
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

	h.run([]apiCase{
		{name: "no credentials", method: "GET", url: h.keysPath(), status: 401, wantCode: "missing_credentials"},
		{name: "name too long", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"name": strings.Repeat("é", 121)}, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "name with NUL", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"name": "a\x00b"}, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "name not a string", method: "POST", url: h.keysPath(), key: member.Secret,
			body: `{"name": 5}`, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "expiresAt in the past", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"expiresAt": at(past)}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt later than the caller's", method: "POST", url: h.keysPath(), key: expiring.Secret,
			body: map[string]any{"expiresAt": at(soon.Add(time.Second))}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt null while the caller expires", method: "POST", url: h.keysPath(), key: expiring.Secret,
			body: `{"expiresAt": null}`, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt malformed", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"expiresAt": "tomorrow"}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt a date only", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"expiresAt": "2030-01-01"}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt without seconds", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"expiresAt": "2030-01-01T00:00"}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "expiresAt a number", method: "POST", url: h.keysPath(), key: member.Secret,
			body: `{"expiresAt": 1893456000}`, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "unknown field", method: "POST", url: h.keysPath(), key: member.Secret,
			body: map[string]any{"scopes": []string{"all"}}, status: 400, wantCode: "validation_failed", wantField: "scopes"},
		{name: "malformed JSON", method: "POST", url: h.keysPath(), key: member.Secret,
			body: `{"name": "x"`, status: 400, wantCode: "invalid_json"},
		{name: "not JSON", method: "POST", url: h.keysPath(), key: member.Secret,
			body: `name=x`, header: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, wantCode: "unsupported_media_type"},

		{name: "update with expiresAt", method: "PUT", url: h.keysPath(own), key: member.Secret,
			body: map[string]any{"name": "x", "expiresAt": at(soon)}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "update with expiresAt null", method: "PUT", url: h.keysPath(own), key: member.Secret,
			body: `{"expiresAt": null}`, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "update of an unknown key without arguments", method: "PUT", url: h.keysPath(uuid.NewString()), key: member.Secret,
			body: `{}`, status: 404, wantCode: "not_found"},
		{name: "update with a read-only field", method: "PUT", url: h.keysPath(own), key: member.Secret,
			body: map[string]any{"name": "x", "status": "active"}, status: 400, wantCode: "validation_failed", wantField: "status"},

		{name: "rotate with both grace fields", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: map[string]any{"gracePeriodHours": 1, "gracePeriodSeconds": 60}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodSeconds"},
		{name: "rotate with negative grace", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: map[string]any{"gracePeriodSeconds": -1}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodSeconds"},
		{name: "rotate with fractional hours", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: map[string]any{"gracePeriodHours": 1.5}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodHours"},
		{name: "rotate with grace over 30 days", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: map[string]any{"gracePeriodHours": 721}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodHours"},
		{name: "rotate with grace as a string", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: `{"gracePeriodSeconds": "60"}`, status: 400, wantCode: "validation_failed", wantField: "gracePeriodSeconds"},
		{name: "rotate with expiresAt in the past", method: "POST", url: h.keysPath(own, "rotate"), key: member.Secret,
			body: map[string]any{"expiresAt": at(past)}, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "rotate to never expire with a caller that expires", method: "POST", url: h.keysPath(expiring.ID.String(), "rotate"), key: expiring.Secret,
			body: `{"expiresAt": null}`, status: 400, wantCode: "validation_failed", wantField: "expiresAt"},
		{name: "rotate an expired key", method: "POST", url: h.keysPath(expired.ID.String(), "rotate"), key: member.Secret,
			status: 409, wantCode: "api_key_expired"},
		{name: "rotate an expired key with a new expiry", method: "POST", url: h.keysPath(expired.ID.String(), "rotate"), key: member.Secret,
			body: map[string]any{"expiresAt": at(soon)}, status: 409, wantCode: "api_key_expired"},

		{name: "another workspace", method: "GET", url: "/v1/workspaces/" + uuid.NewString() + "/api-keys", key: member.Secret,
			status: 404, wantCode: "not_found"},
		{name: "malformed key id", method: "GET", url: h.keysPath("not-a-uuid"), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "unknown key", method: "GET", url: h.keysPath(uuid.NewString()), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "another member's key: get", method: "GET", url: h.keysPath(othersKey.ID.String()), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "another member's key: update", method: "PUT", url: h.keysPath(othersKey.ID.String()), key: member.Secret,
			body: map[string]any{"name": "mine now"}, status: 404, wantCode: "not_found"},
		{name: "another member's key: rotate", method: "POST", url: h.keysPath(othersKey.ID.String(), "rotate"), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "another member's key: delete", method: "DELETE", url: h.keysPath(othersKey.ID.String()), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "method not allowed", method: "PATCH", url: h.keysPath(own), key: member.Secret, status: 405, wantCode: "method_not_allowed"},
	})

	// Nothing was half-written: the other member's key is untouched.
	var got models.APIKey
	h.doJSON("GET", h.keysPath(othersKey.ID.String()), other.Secret, nil, 200, &got)
	if got.Name != nil || got.LastRotatedAt != nil {
		t.Errorf("a refused request changed the key: %+v", got)
	}
}
