package apiclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
)

// Requests carry the key and a JSON body; Expect decodes the wanted
// status and reports any other with the answer.
func TestExpect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-key" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path, "type": r.Header.Get("Content-Type"), "body": string(body)})
	}))
	defer srv.Close()
	c := apiclient.New("api-1", strings.TrimPrefix(srv.URL, "http://"), "sk-key", "ws1")
	ctx := context.Background()

	var got struct{ Path, Type, Body string }
	if err := c.Expect(ctx, http.MethodPost, c.WSPath("/events"), map[string]int{"n": 1}, http.StatusCreated, &got); err != nil {
		t.Fatal(err)
	}
	if got.Path != "/v1/workspaces/ws1/events" || got.Type != "application/json" || got.Body != `{"n":1}` {
		t.Errorf("the server saw %+v", got)
	}
	err := c.Expect(ctx, http.MethodGet, "/projects", nil, http.StatusOK, nil)
	if err == nil || !strings.Contains(err.Error(), "api-1 GET /projects: status 201, want 200") {
		t.Errorf("a status not wanted: %v", err)
	}
	c.Key = "wrong"
	if r, err := c.Send(ctx, http.MethodGet, "/projects", nil); err != nil || r.Status != http.StatusUnauthorized {
		t.Errorf("a wrong key: %d, %v; want 401", r.Status, err)
	}
}

// SendWith adds its headers to the request, beside the key.
func TestSendWithHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Echo", r.Header.Get("Idempotency-Key")+" "+r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c := apiclient.New("api-1", strings.TrimPrefix(srv.URL, "http://"), "sk-key", "ws1")
	r, err := c.SendWith(context.Background(), http.MethodPost, "/x", http.Header{"Idempotency-Key": {"k-1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Header.Get("Echo"); got != "k-1 Bearer sk-key" {
		t.Errorf("the server saw %q, want the key and the bearer", got)
	}
}
