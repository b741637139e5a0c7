package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// addKey adds a member with its own key to the harness's workspace.
func (h *harness) addKey(role models.Role) store.Credentials {
	h.t.Helper()
	c, err := h.store.AddMember(context.Background(), h.admin.WorkspaceID, uuid.NewString()[:8]+"@acme.test", role)
	if err != nil {
		h.t.Fatalf("add member: %v", err)
	}
	return c
}

// rotate gives key a new current secret, leaving the old one as the previous
// secret until graceEnds, the way a rotation stores it.
func (h *harness) rotate(key store.Credentials, graceEnds time.Time) string {
	h.t.Helper()
	next, err := secret.NewAPIKey()
	if err != nil {
		h.t.Fatal(err)
	}
	h.exec(`UPDATE api_keys SET previous_secret_hash = secret_hash, secret_hash = ?, secure_key = ?,
		previous_key_expires_at = ?, last_rotated_at = ?, status = 'rotating' WHERE id = ?`,
		next.Hash, next.Hint, graceEnds, graceEnds.Add(-time.Hour), key.APIKeyID)
	return next.Secret
}

// Every way of presenting no valid key is a 401 in the error shape with a
// Bearer challenge. The clock is pinned so deadlines can be hit exactly.
func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(now)

	expired := h.addKey(models.RoleAdmin)
	h.exec("UPDATE api_keys SET expires_at = ? WHERE id = ?", now.Add(-time.Hour), expired.APIKeyID)
	atExpiry := h.addKey(models.RoleAdmin)
	h.exec("UPDATE api_keys SET expires_at = ? WHERE id = ?", now, atExpiry.APIKeyID)
	beforeExpiry := h.addKey(models.RoleAdmin)
	h.exec("UPDATE api_keys SET expires_at = ? WHERE id = ?", now.Add(time.Microsecond), beforeExpiry.APIKeyID)
	revoked := h.addKey(models.RoleAdmin)
	h.exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", now.Add(-time.Minute), revoked.APIKeyID)
	removed := h.addKey(models.RoleMember)
	h.exec("DELETE FROM workspace_members WHERE user_id = ?", removed.UserID)

	graceOver := h.addKey(models.RoleAdmin)
	graceOverNew := h.rotate(graceOver, now.Add(-time.Second))
	graceAtEnd := h.addKey(models.RoleAdmin)
	graceAtEndNew := h.rotate(graceAtEnd, now)
	graceOpen := h.addKey(models.RoleAdmin)
	graceOpenNew := h.rotate(graceOpen, now.Add(time.Hour))

	unknown, err := secret.NewAPIKey()
	if err != nil {
		t.Fatal(err)
	}
	valid := h.admin.Secret
	body := valid[len(secret.APIKeyPrefix):]

	get := func(name string, header []string, status int, code string) apiCase {
		return apiCase{name: name, method: http.MethodGet, url: "/v1/projects", header: header, status: status, wantCode: code}
	}
	bearer := func(name, token string, status int, code string) apiCase {
		return get(name, []string{"Authorization", "Bearer " + token}, status, code)
	}
	h.run([]apiCase{
		get("no Authorization header", nil, http.StatusUnauthorized, "missing_credentials"),
		get("Basic scheme", []string{"Authorization", "Basic YWRtaW46YWRtaW4="}, http.StatusUnauthorized, "missing_credentials"),
		get("key without a scheme", []string{"Authorization", valid}, http.StatusUnauthorized, "missing_credentials"),
		get("Bearer and nothing", []string{"Authorization", "Bearer"}, http.StatusUnauthorized, "missing_credentials"),
		get("Bearer and spaces", []string{"Authorization", "Bearer    "}, http.StatusUnauthorized, "missing_credentials"),
		bearer("unknown key", unknown.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("wrong prefix on a real key's body", "sk_"+body, http.StatusUnauthorized, "invalid_api_key"),
		bearer("prefix in another case", strings.ToUpper(secret.APIKeyPrefix)+body, http.StatusUnauthorized, "invalid_api_key"),
		bearer("key with a character changed", valid[:len(valid)-1]+flip(valid[len(valid)-1]), http.StatusUnauthorized, "invalid_api_key"),
		bearer("key with a suffix", valid+"x", http.StatusUnauthorized, "invalid_api_key"),
		bearer("overlong token", secret.APIKeyPrefix+strings.Repeat("a", 300), http.StatusUnauthorized, "invalid_api_key"),
		bearer("the hint instead of the key", secret.APIKeyHint(valid), http.StatusUnauthorized, "invalid_api_key"),
		bearer("expired key", expired.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("key at exactly its expiry instant", atExpiry.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("revoked key", revoked.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("key of a member removed from the workspace", removed.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("previous secret after its grace period", graceOver.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("previous secret at exactly the end of its grace", graceAtEnd.Secret, http.StatusUnauthorized, "invalid_api_key"),

		bearer("valid key", valid, http.StatusOK, ""),
		get("scheme in lower case", []string{"Authorization", "bearer " + valid}, http.StatusOK, ""),
		bearer("key a microsecond before its expiry", beforeExpiry.Secret, http.StatusOK, ""),
		bearer("new secret after the grace period", graceOverNew, http.StatusOK, ""),
		bearer("new secret at the end of the grace", graceAtEndNew, http.StatusOK, ""),
		bearer("previous secret during its grace period", graceOpen.Secret, http.StatusOK, ""),
		bearer("new secret during the grace period", graceOpenNew, http.StatusOK, ""),
	})

	// The same keys are judged again when time moves on, with no write to
	// the database in between: validity is computed at request time.
	h.clock.Set(now.Add(2 * time.Hour))
	h.run([]apiCase{
		bearer("later: grace period over", graceOpen.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("later: past expiry", beforeExpiry.Secret, http.StatusUnauthorized, "invalid_api_key"),
		bearer("later: new secret still works", graceOpenNew, http.StatusOK, ""),
	})
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// Any route under /v1 is authenticated, including one that does not exist
// below a known prefix, and a rejected request never reaches the handler.
func TestAuthenticationGuardsEveryV1Route(t *testing.T) {
	h := newHarness(t)
	h.run([]apiCase{
		{name: "create without a key", method: http.MethodPost, url: "/v1/projects", body: `{"name":"x","taskType":"llm-base"}`, status: http.StatusUnauthorized, wantCode: "missing_credentials"},
		{name: "delete with a bad key", method: http.MethodDelete, url: "/v1/projects/" + uuid.NewString(), key: "olk_nope", status: http.StatusUnauthorized, wantCode: "invalid_api_key"},
	})
	if p := h.listPage(""); p.Meta.TotalItems != 0 {
		t.Errorf("an unauthenticated create wrote %v", names(p.Items))
	}
}

// A workspace path is reachable only with that workspace's keys; any other
// id, real or not, reads as not found.
func TestWorkspacePathIsTheCallersOnly(t *testing.T) {
	h := newHarness(t)
	other, err := h.store.Bootstrap(context.Background(), "Other", "other@other.test")
	if err != nil {
		t.Fatal(err)
	}
	reached := 0
	probe := h.srv.WorkspaceRouteForTest(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusNoContent)
	}))
	cases := []apiCase{
		{name: "own workspace", key: h.admin.Secret, url: "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/probe", status: http.StatusNoContent},
		{name: "another real workspace", key: h.admin.Secret, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/probe", status: http.StatusNotFound, wantCode: "not_found"},
		{name: "the other workspace with its own key", key: other.Secret, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/probe", status: http.StatusNoContent},
		{name: "a workspace that does not exist", key: h.admin.Secret, url: "/v1/workspaces/" + uuid.NewString() + "/probe", status: http.StatusNotFound, wantCode: "not_found"},
		{name: "a malformed workspace id", key: h.admin.Secret, url: "/v1/workspaces/acme/probe", status: http.StatusNotFound, wantCode: "not_found"},
		{name: "own workspace id in upper case", key: h.admin.Secret, url: "/v1/workspaces/" + strings.ToUpper(h.admin.WorkspaceID.String()) + "/probe", status: http.StatusNoContent},
		{name: "no key", url: "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/probe", status: http.StatusUnauthorized, wantCode: "missing_credentials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			probe.ServeHTTP(rec, request(t, http.MethodGet, c.url, c.key, nil))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d; body %s", rec.Code, c.status, rec.Body)
			}
			if c.status >= 400 {
				checkError(t, rec, c.wantCode, "")
			}
		})
	}
	if reached != 3 {
		t.Errorf("the handler ran %d times, want 3 (own workspace only)", reached)
	}
	// The 404 for another workspace reads exactly like one for no workspace.
	a := h.srv.WorkspaceRouteForTest(http.NotFoundHandler())
	recOther, recNone := httptest.NewRecorder(), httptest.NewRecorder()
	a.ServeHTTP(recOther, request(t, http.MethodGet, "/v1/workspaces/"+other.WorkspaceID.String()+"/probe", h.admin.Secret, nil, "X-Request-Id", "same"))
	a.ServeHTTP(recNone, request(t, http.MethodGet, "/v1/workspaces/"+uuid.NewString()+"/probe", h.admin.Secret, nil, "X-Request-Id", "same"))
	if recOther.Body.String() != recNone.Body.String() {
		t.Errorf("another workspace answers %s, a missing one %s", recOther.Body, recNone.Body)
	}

	// Through the real router: the same route answers for the caller's
	// workspace and reads as absent for any other.
	own := "/v1/workspaces/" + h.admin.WorkspaceID.String()
	theirs := "/v1/workspaces/" + other.WorkspaceID.String()
	h.run([]apiCase{
		{name: "real router, own workspace", method: http.MethodGet, url: own + "/api-keys", key: h.admin.Secret, status: http.StatusOK},
		{name: "real router, other workspace", method: http.MethodGet, url: theirs + "/api-keys", key: h.admin.Secret, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "real router, write to other workspace", method: http.MethodPost, url: theirs + "/api-keys", key: h.admin.Secret, body: `{"name":"x"}`, status: http.StatusNotFound, wantCode: "not_found"},
		{name: "real router, other workspace without a key", method: http.MethodGet, url: theirs + "/api-keys", status: http.StatusUnauthorized, wantCode: "missing_credentials"},
		{name: "real router, wrong method under a workspace", method: http.MethodPatch, url: own + "/api-keys", key: h.admin.Secret, status: http.StatusMethodNotAllowed, wantCode: "method_not_allowed"},
	})
}

// With several Authorization headers, which one counts would depend on
// which the code happens to read; a request must send exactly one.
func TestSeveralAuthorizationHeadersAreRefused(t *testing.T) {
	h := newHarness(t)
	other := h.addKey(models.RoleAdmin)
	for _, order := range [][2]string{{h.admin.Secret, other.Secret}, {other.Secret, h.admin.Secret}} {
		r := request(t, http.MethodGet, "/v1/projects", "", nil)
		r.Header.Add("Authorization", "Bearer "+order[0])
		r.Header.Add("Authorization", "Bearer "+order[1])
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, r)
		checkError(t, rec, "missing_credentials", "")
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401", rec.Code)
		}
	}
}
