package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

func TestMain(m *testing.M) { Main(m) }

// The foundation's "done when", over real sockets: the real API and worker
// processes, an embedded Temporal server and a fresh database.
func TestFoundationEndToEnd(t *testing.T) {
	env := Start(t)
	root := strings.TrimSuffix(env.BaseURL, "/v1")

	// Ready: PostgreSQL migrated and Temporal answering.
	resp, err := http.Get(root + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ready":true`) {
		t.Fatalf("readyz: %d %s", resp.StatusCode, body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get("http://" + env.WorkerAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("worker %s: %d", path, resp.StatusCode)
		}
	}

	status, raw := env.Do(t, http.MethodGet, "/projects", env.AdminKey, nil)
	const empty = `{"_meta":{"page":1,"perPage":25,"totalItems":0,"totalPages":0},"items":[]}`
	if status != http.StatusOK || strings.TrimSpace(string(raw)) != empty {
		t.Errorf("first list: %d %s, want %s", status, raw, empty)
	}

	status, raw = env.Do(t, http.MethodGet, "/projects", "olk_wrong", nil)
	var e struct {
		Error struct{ Code, Message, RequestID string } `json:"error"`
	}
	if status != http.StatusUnauthorized || json.Unmarshal(raw, &e) != nil || e.Error.Code != "invalid_api_key" || e.Error.RequestID == "" {
		t.Errorf("wrong key: %d %s", status, raw)
	}

	var p models.Project
	env.DoJSON(t, http.MethodPost, "/projects", env.AdminKey, map[string]string{"name": "e2e", "taskType": "llm-base"}, http.StatusCreated, &p)
	var page models.Page[models.Project]
	env.DoJSON(t, http.MethodGet, "/projects?name=E2E", env.AdminKey, nil, http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].ID != p.ID || page.Meta.TotalPages != 1 {
		t.Errorf("list after create: %+v", page)
	}
	env.DoJSON(t, http.MethodDelete, "/projects/"+p.ID.String(), env.AdminKey, nil, http.StatusNoContent, nil)

	// Over a real connection, an oversized body is refused with 413 in the
	// error shape rather than a reset.
	big := `{"name":"big","taskType":"llm-base","description":"` + strings.Repeat("x", 2<<20) + `"}`
	status, raw = env.Do(t, http.MethodPost, "/projects", env.AdminKey, big)
	if status != http.StatusRequestEntityTooLarge || !bytes.Contains(raw, []byte(`"body_too_large"`)) {
		t.Errorf("2 MiB body: %d %.200s", status, raw)
	}

	// The request id travels back in the header.
	req, _ := http.NewRequest(http.MethodGet, env.BaseURL+"/projects", nil)
	req.Header.Set("Authorization", "Bearer "+env.AdminKey)
	req.Header.Set("X-Request-Id", "e2e-trace-1")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "e2e-trace-1" {
		t.Errorf("X-Request-Id %q", got)
	}
}
