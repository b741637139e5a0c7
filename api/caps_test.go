package api_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/openlayer-ai/workspace-service/api"
)

// raceCreates sends n POSTs to path at once and returns how many were
// created; every other answer must be a 409.
func (h *harness) raceCreates(n int, path string, body func(i int) any) int {
	h.t.Helper()
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range codes {
		wg.Go(func() { codes[i] = h.do(http.MethodPost, path, h.admin.Secret, body(i)).Code })
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			h.t.Fatalf("racing creates answered %v", codes)
		}
	}
	return created
}

// The cap on keys not revoked holds when creates race for the last places;
// the create past it is a 409 the SDKs do not retry, and revoking a key
// frees its place.
func TestAPIKeyCap(t *testing.T) {
	const max = 5
	h := newHarness(t, func(d *api.Deps) { d.Config.MaxAPIKeysPerWorkspace = max })
	// The bootstrap key holds one place.
	if n := h.raceCreates(10, h.keysPath(), func(int) any { return map[string]any{} }); n != max-1 {
		t.Fatalf("%d of the racing creates succeeded, want %d", n, max-1)
	}
	rec := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{})
	if rec.Code != http.StatusConflict || rec.Header().Get("X-Should-Retry") != "false" {
		t.Fatalf("create past the cap: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	checkError(t, rec, "api_key_limit_reached", "")

	var list []struct{ ID string }
	h.doJSON(http.MethodGet, h.keysPath(), h.admin.Secret, nil, http.StatusOK, &list)
	var other string
	for _, k := range list {
		if k.ID != h.admin.APIKeyID.String() {
			other = k.ID
		}
	}
	h.doJSON(http.MethodDelete, h.keysPath(other), h.admin.Secret, nil, http.StatusNoContent, nil)
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{}, http.StatusCreated, nil)
}

func TestProjectCap(t *testing.T) {
	const max = 3
	h := newHarness(t, func(d *api.Deps) { d.Config.MaxProjectsPerWorkspace = max })
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	body := func(i int) any { return map[string]any{"name": names[i], "taskType": "llm-base"} }
	if n := h.raceCreates(len(names), "/v1/projects", body); n != max {
		t.Fatalf("%d of the racing creates succeeded, want %d", n, max)
	}
	rec := h.do(http.MethodPost, "/v1/projects", h.admin.Secret, map[string]any{"name": "z", "taskType": "llm-base"})
	if rec.Code != http.StatusConflict || rec.Header().Get("X-Should-Retry") != "false" {
		t.Fatalf("create past the cap: %d %s", rec.Code, rec.Body)
	}
	checkError(t, rec, "project_limit_reached", "")
}
