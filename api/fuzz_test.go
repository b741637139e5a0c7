package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// fuzzRoutes are the API's endpoints, with {ws} for the caller's workspace
// and {id} for a fuzzed path segment.
var fuzzRoutes = []struct{ method, path string }{
	{http.MethodGet, "/v1/projects"},
	{http.MethodPost, "/v1/projects"},
	{http.MethodDelete, "/v1/projects/{id}"},
	{http.MethodPost, "/v1/workspaces/{ws}/api-keys"},
	{http.MethodGet, "/v1/workspaces/{ws}/api-keys"},
	{http.MethodGet, "/v1/workspaces/{ws}/api-keys/{id}"},
	{http.MethodPut, "/v1/workspaces/{ws}/api-keys/{id}"},
	{http.MethodDelete, "/v1/workspaces/{ws}/api-keys/{id}"},
	{http.MethodPost, "/v1/workspaces/{ws}/api-keys/{id}/rotate"},
	{http.MethodPost, "/v1/workspaces/{ws}/webhooks"},
	{http.MethodGet, "/v1/workspaces/{ws}/webhooks"},
	{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}"},
	{http.MethodPut, "/v1/workspaces/{ws}/webhooks/{id}"},
	{http.MethodDelete, "/v1/workspaces/{ws}/webhooks/{id}"},
	{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}/deliveries"},
	{http.MethodPost, "/v1/workspaces/{ws}/events"},
	{http.MethodGet, "/v1/workspaces/{ws}"},
	{http.MethodPut, "/v1/workspaces/{ws}"},
	{http.MethodPost, "/v1/workspaces/{ws}/invites"},
	{http.MethodGet, "/v1/workspaces/{ws}/invites"},
	{http.MethodDelete, "/v1/workspaces/{ws}/invites/{id}"},
	{http.MethodPost, "/v1/invites/{id}/accept"},
}

// FuzzRequests sends arbitrary ids, query strings, bodies, content types and
// Authorization headers to every endpoint through the real router on a real
// database: no input may produce a 5xx or a panic, and every error is the
// one JSON error shape. A short run per target is part of CI (make
// fuzz-short); seeds live in testdata/fuzz/FuzzRequests and below.
func FuzzRequests(f *testing.F) {
	db := pgtest.NewDB(f)
	st := store.New(db)
	admin, err := st.Bootstrap(context.Background(), "Fuzz", "fuzz-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		f.Fatal(err)
	}
	cfg := config.Defaults()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cfg.WebhookSecretKeys = [][]byte{key}
	deps := api.Deps{Config: cfg, Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	noRateLimits(&deps) // every input must reach its handler, not a 429
	srv := api.New(deps)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Run(ctx) }()
	f.Cleanup(func() { cancel(); <-done })

	some := uuid.NewString()
	for i, body := range []string{
		``, `{}`, `null`, `[]`, `{"name":"p","taskType":"llm-base"}`, `{"name":null,"expiresAt":"2030-01-01T00:00:00"}`,
		`{"gracePeriodSeconds":1e308}`, `{"url":"https://example.com/h","eventTypes":["test.created"]}`,
		`{"type":"test.created","data":{"a":"\ud800"}}`, `{"a":1,"a":2}`, "{\"name\":\"\x00\"}", `{"data":1e999999}`,
		`{"emails":["a@example.com","A@example.com"],"role":"VIEWER"}`, `{"slug":"a--b","inviteCode":null}`, `{"token":"oli_x"}`,
	} {
		f.Add(uint8(i), some, "page=1&perPage=25", []byte(body), "application/json", "")
		f.Add(uint8(i+3), "../"+some, "page=-1&perPage=1e9&name=%00", []byte(body), "text/plain", "Bearer olk_x")
	}

	f.Fuzz(func(t *testing.T, route uint8, id, rawQuery string, body []byte, contentType, auth string) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.ReplaceAll(r.path, "{ws}", admin.WorkspaceID.String())
		path = strings.ReplaceAll(path, "{id}", id)
		req, err := http.NewRequest(r.method, "http://api.test"+path, strings.NewReader(string(body)))
		if err != nil {
			return // not a URL a client can send
		}
		req.URL.RawQuery = rawQuery
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		// The admin's key unless the input brings its own header.
		if auth == "" {
			auth = "Bearer " + admin.Secret
		}
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s with %q: %d %s", r.method, path, rawQuery, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct {
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %s: %d not in the error shape: %s", r.method, path, rec.Code, rec.Body)
			}
		}
	})
}
