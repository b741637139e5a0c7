package api_test

import (
	"net/http"
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
