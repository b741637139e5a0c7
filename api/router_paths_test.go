package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// gorilla/mux would clean paths itself and answer an unclean one ("//",
// "/./", "/../") with a bare 301 and an empty body, outside the one JSON
// error shape (and a 301 turns a client's POST into a GET). The router
// skips cleaning, so such paths get the JSON 404.
func TestUncleanPathGetsJSONError(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/v1//projects", "/v1/./projects", "/v1/workspaces/../projects"} {
		rec := h.do(http.MethodPost, p, h.admin.Secret, map[string]any{"name": "x", "taskType": "llm-base"})
		if rec.Code < 400 || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("POST %s: %d, Content-Type %q, Location %q, body %q; want a 4xx in the JSON error shape",
				p, rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Location"), rec.Body)
		}
	}
}

// An id has one spelling in a path: the canonical 36-character form (either
// case). urn:uuid:, braced and unhyphenated forms, and an encoded slash
// that would split a segment, find nothing.
func TestPathIDsHaveOneSpelling(t *testing.T) {
	h := newHarness(t)
	ws := h.admin.WorkspaceID.String()
	key := h.admin.APIKeyID.String()
	for _, p := range []string{
		"/v1/workspaces/" + ws + "/api-keys/urn:uuid:" + key,
		"/v1/workspaces/" + ws + "/api-keys/{" + key + "}",
		"/v1/workspaces/" + ws + "/api-keys/" + strings.ReplaceAll(key, "-", ""),
		"/v1/workspaces/{" + ws + "}/api-keys",
		"/v1/workspaces/" + ws + "%2Fapi-keys",
	} {
		rec := h.do(http.MethodGet, p, h.admin.Secret, nil)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404; body %s", p, rec.Code, rec.Body)
		}
	}
	for _, p := range []string{
		"/v1/workspaces/" + ws + "/api-keys/" + key,
		"/v1/workspaces/" + strings.ToUpper(ws) + "/api-keys/" + strings.ToUpper(key),
	} {
		if rec := h.do(http.MethodGet, p, h.admin.Secret, nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200; body %s", p, rec.Code, rec.Body)
		}
	}
}
