package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// api calls one API process with one key.
type api struct {
	name, base, key, ws string
	http                *http.Client
}

func newAPI(name, addr, key, workspaceID string) *api {
	return &api{name: name, base: "http://" + addr + "/v1", key: key, ws: workspaceID,
		http: &http.Client{Timeout: 30 * time.Second}}
}

// call sends a request and decodes a JSON answer into out (when not nil),
// failing the test unless the status is want.
func (a *api) call(ctx context.Context, t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	if err := a.try(ctx, method, path, body, want, out); err != nil {
		t.Fatal(err)
	}
}

func (a *api) try(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", a.name, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s %s: %d (want %d) %s", a.name, method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// wsPath is a path under the key's workspace.
func (a *api) wsPath(p string) string { return "/workspaces/" + a.ws + p }

// publish sends one test.created event and returns its id.
func (a *api) publish(ctx context.Context, t *testing.T, seq int) string {
	t.Helper()
	var ev struct{ ID string }
	a.call(ctx, t, http.MethodPost, a.wsPath("/events"),
		map[string]any{"type": "test.created", "data": map[string]any{"seq": seq, "via": a.name}}, http.StatusAccepted, &ev)
	return ev.ID
}

// page is the envelope of every list.
type page[T any] struct {
	Meta struct {
		TotalItems int `json:"totalItems"`
	} `json:"_meta"`
	Items []T `json:"items"`
}
