package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func (h *harness) wsPath(rest ...string) string {
	return "/v1/workspaces/" + h.admin.WorkspaceID.String() + strings.Join(append([]string{""}, rest...), "/")
}

// Any member reads the workspace, with counts of its own rows and null
// where the service has no such notion.
func TestWorkspaceRetrieve(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)
	h.doJSON(http.MethodPost, "/v1/projects", h.admin.Secret, map[string]any{"name": "p", "taskType": "llm-base"}, http.StatusCreated, nil)
	h.doJSON(http.MethodPost, h.wsPath("invites"), h.admin.Secret, map[string]any{"emails": []string{"a@example.com", "b@example.com"}}, http.StatusCreated, nil)

	var raw map[string]any
	h.doJSON(http.MethodGet, h.wsPath(), member.Secret, nil, http.StatusOK, &raw)
	for _, k := range []string{"periodEndDate", "periodStartDate", "monthlyUsage", "samlOnlyAccess", "wildcardDomains"} {
		if v, ok := raw[k]; !ok || v != nil {
			t.Errorf("%s: %v (present %v), want null", k, v, ok)
		}
	}
	want := map[string]any{"id": h.admin.WorkspaceID.String(), "creatorId": h.admin.UserID.String(), "name": "Acme",
		"memberCount": 2.0, "inviteCount": 2.0, "projectCount": 1.0, "status": "active"}
	for k, v := range want {
		if raw[k] != v {
			t.Errorf("%s: %v, want %v", k, raw[k], v)
		}
	}
	if s, _ := raw["slug"].(string); !strings.HasPrefix(s, "acme-") {
		t.Errorf("slug %q, want acme-…", s)
	}
	h.run([]apiCase{
		{name: "another workspace", method: "GET", url: "/v1/workspaces/" + uuid.NewString(), key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "malformed id", method: "GET", url: "/v1/workspaces/nope", key: member.Secret, status: 404, wantCode: "not_found"},
		{name: "no key", method: "GET", url: h.wsPath(), status: 401, wantCode: "missing_credentials"},
	})
}

func TestWorkspaceUpdate(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(created)
	var before models.Workspace
	h.doJSON(http.MethodGet, h.wsPath(), h.admin.Secret, nil, http.StatusOK, &before)

	// {} and no body change nothing, dateUpdated included.
	for _, body := range []any{`{}`, nil, `{"inviteCode":"inviteCode"}`} {
		var got models.Workspace
		h.doJSON(http.MethodPut, h.wsPath(), h.admin.Secret, body, http.StatusOK, &got)
		if got.Name != before.Name || got.Slug != before.Slug || !got.DateUpdated.Equal(before.DateUpdated) {
			t.Errorf("PUT %v: %+v, want the workspace unchanged", body, got)
		}
	}
	h.clock.Set(created.Add(time.Hour))
	var got models.Workspace
	h.doJSON(http.MethodPut, h.wsPath(), h.admin.Secret, map[string]any{"name": "  Openlayer ", "slug": "openlayer", "inviteCode": "x"}, http.StatusOK, &got)
	if got.Name != "Openlayer" || got.Slug != "openlayer" || !got.DateUpdated.Equal(created.Add(time.Hour)) || got.MemberCount != 2 {
		t.Errorf("updated: %+v", got)
	}
	h2, err := h.store.Bootstrap(t.Context(), "Other", "o-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	h.run([]apiCase{
		{name: "member", method: "PUT", url: h.wsPath(), key: member.Secret, body: `{"name":"x"}`, status: 403, wantCode: "forbidden"},
		{name: "blank name", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: `{"name":"  "}`, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "null name", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: `{"name":null}`, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "name over 256", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: map[string]any{"name": strings.Repeat("n", 257)}, status: 400, wantCode: "validation_failed", wantField: "name"},
		{name: "slug upper case", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: `{"slug":"Openlayer"}`, status: 400, wantCode: "validation_failed", wantField: "slug"},
		{name: "slug double hyphen", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: `{"slug":"a--b"}`, status: 400, wantCode: "validation_failed", wantField: "slug"},
		{name: "slug over 64", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: map[string]any{"slug": strings.Repeat("s", 65)}, status: 400, wantCode: "validation_failed", wantField: "slug"},
		{name: "unknown member", method: "PUT", url: h.wsPath(), key: h.admin.Secret, body: `{"status":"paused"}`, status: 400, wantCode: "validation_failed", wantField: "status"},
		{name: "another workspace", method: "PUT", url: "/v1/workspaces/" + h2.WorkspaceID.String(), key: h.admin.Secret, body: `{"name":"x"}`, status: 404, wantCode: "not_found"},
	})
	// Another workspace's slug is taken.
	h.doJSON(http.MethodPut, h.wsPath(), h.admin.Secret, map[string]any{"slug": "mine"}, http.StatusOK, nil)
	h2ws := "/v1/workspaces/" + h2.WorkspaceID.String()
	rec := h.do(http.MethodPut, h2ws, h2.Secret, map[string]any{"slug": "mine"})
	if rec.Code != http.StatusConflict {
		t.Fatalf("slug taken: %d %s", rec.Code, rec.Body)
	}
	checkError(t, rec, "slug_taken", "")
}
