package api_test

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Requests exactly as the official SDKs (Stainless-generated Go, TypeScript
// and Python clients) send them, for the cases where they once differed
// from what the service accepted.

// An update without arguments is {} in every SDK (and no body at all from
// some callers): no change, 200 with the key as it is, dateUpdated kept.
func TestSDKUpdateWithoutArguments(t *testing.T) {
	h := newHarness(t)
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(created)
	member := h.addKey(models.RoleMember)
	other := h.addKey(models.RoleMember)
	var k models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), member.Secret, map[string]any{"name": "ci"}, http.StatusCreated, &k)

	h.clock.Set(created.Add(time.Hour))
	for _, body := range []any{`{}`, ` `, nil} {
		var got models.APIKey
		h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), member.Secret, body, http.StatusOK, &got)
		if got.ID != k.ID || got.Name == nil || *got.Name != "ci" || !got.DateUpdated.Equal(k.DateUpdated) || got.Status != models.KeyActive {
			t.Errorf("PUT %q: %+v, want the key unchanged (name ci, dateUpdated %s)", body, got, k.DateUpdated)
		}
	}

	// The same permission checks as a rename: another member's key reads
	// as absent, and so does a key that does not exist.
	h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), other.Secret, `{}`, http.StatusNotFound, nil)

	// null still removes the name, and that is a change.
	var got models.APIKey
	h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), member.Secret, `{"name": null}`, http.StatusOK, &got)
	if got.Name != nil || !got.DateUpdated.Equal(created.Add(time.Hour)) {
		t.Errorf("PUT {\"name\": null}: %+v, want no name and dateUpdated bumped", got)
	}
}

// The SDKs retry 408, 409, 429 and 5xx unless the response says
// X-Should-Retry: false. A conflict is the same on every attempt, so each
// 409 says so and the caller sees it at once instead of after three
// requests and ~1.4 s.
func TestSDKDoesNotRetryConflicts(t *testing.T) {
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.WebhookMaxSubscriptions = 1 })
	project := `{"name":"Fraud model","taskType":"llm-base"}`
	h.doJSON(http.MethodPost, "/v1/projects", h.admin.Secret, project, http.StatusCreated, nil)
	hook := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}
	h.createHook(hook)
	now := time.Now()
	past := now.Add(-time.Hour)
	expired := h.issueKey(h.admin, &past, now.Add(-2*time.Hour))

	for _, c := range []struct {
		code, method, url string
		body              any
	}{
		{"project_name_taken", http.MethodPost, "/v1/projects", project},
		{"webhook_limit_reached", http.MethodPost, h.hooksPath(), hook},
		{"api_key_expired", http.MethodPost, h.keysPath(expired.ID.String(), "rotate"), `{}`},
	} {
		rec := h.do(c.method, c.url, h.admin.Secret, c.body)
		if rec.Code != http.StatusConflict {
			t.Fatalf("%s: status %d, want 409; body %s", c.code, rec.Code, rec.Body)
		}
		checkError(t, rec, c.code, "")
		if got := rec.Header().Get("X-Should-Retry"); got != "false" {
			t.Errorf("%s: X-Should-Retry %q, want false", c.code, got)
		}
	}
}

// A database outage is a 503 with Retry-After, and retrying may well help:
// it must not carry X-Should-Retry: false.
func TestSDKRetriesDatabaseOutage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	db, err := store.Open("postgres://postgres@"+addr+"/none?sslmode=disable", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := api.New(api.Deps{Config: config.Defaults(), Store: store.New(db), Log: slog.New(slog.DiscardHandler)})

	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, request(t, http.MethodGet, "/v1/projects", secret.APIKeyPrefix+"AAAA", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", rec.Code, rec.Body)
	}
	checkError(t, rec, "unavailable", "")
	if rec.Header().Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	if got, ok := rec.Header()["X-Should-Retry"]; ok {
		t.Errorf("a 503 with X-Should-Retry %q; retrying it may succeed", got)
	}
	// The driver's error names the database's address: it stays in the log.
	if body := rec.Body.String(); strings.Contains(body, addr) || strings.Contains(body, "dial") {
		t.Errorf("the 503 body leaks the driver's error: %s", body)
	}
}

// The Python SDK writes a naive datetime as isoformat() does, without an
// offset: it is read as UTC, on create and on rotate, and read back in
// RFC 3339 with Z.
func TestSDKNaiveExpiry(t *testing.T) {
	h := newHarness(t)
	h.clock.Set(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	const naive = "2026-11-28T00:15:30.065308" // datetime(2026, 11, 28, 0, 15, 30, 65308).isoformat()
	want := time.Date(2026, 11, 28, 0, 15, 30, 65308000, time.UTC)
	expiresAt := func(rec *httptest.ResponseRecorder) string {
		t.Helper()
		var raw string
		if err := json.Unmarshal(members(t, rec.Body.Bytes())["expiresAt"], &raw); err != nil {
			t.Fatalf("expiresAt in %s: %v", rec.Body, err)
		}
		return raw
	}

	rec := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, `{"expiresAt": "`+naive+`"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if got := expiresAt(rec); got != "2026-11-28T00:15:30.065308Z" {
		t.Errorf("create: expiresAt %s, want 2026-11-28T00:15:30.065308Z", got)
	}
	var k models.APIKey
	if err := json.Unmarshal(rec.Body.Bytes(), &k); err != nil {
		t.Fatal(err)
	}
	h.doJSON(http.MethodGet, h.keysPath(k.ID.String()), h.admin.Secret, nil, http.StatusOK, &k)
	if k.ExpiresAt == nil || !k.ExpiresAt.Equal(want) {
		t.Errorf("stored expiresAt %v, want %v", k.ExpiresAt, want)
	}

	// Without fractional seconds too, on rotate.
	rec = h.do(http.MethodPost, h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, `{"expiresAt": "2026-11-27T08:00:00"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	if got := expiresAt(rec); got != "2026-11-27T08:00:00Z" {
		t.Errorf("rotate: expiresAt %s, want 2026-11-27T08:00:00Z", got)
	}

	// A date alone is still refused, and the message names what is accepted.
	rec = h.do(http.MethodPost, h.keysPath(), h.admin.Secret, `{"expiresAt": "2026-11-28"}`)
	e := checkError(t, rec, "validation_failed", "expiresAt")
	if rec.Code != http.StatusBadRequest || !strings.Contains(e.Error.Message, "without an offset") {
		t.Errorf("date only: %d %s", rec.Code, rec.Body)
	}
}

// The TypeScript SDK sends the JSON body null for an argument given as null
// (apiKeys.create(ws, null)). Where the whole body is optional it means {};
// where a body is required it is still a 400.
func TestSDKNullBody(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	var k models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, `null`, http.StatusCreated, &k)
	if k.Name != nil || k.ExpiresAt != nil || k.Secret == "" {
		t.Errorf("create with null: %+v, want an unnamed key that never expires", k)
	}
	var got models.APIKey
	h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), h.admin.Secret, `null`, http.StatusOK, &got)
	if got.ID != k.ID || !got.DateUpdated.Equal(k.DateUpdated) {
		t.Errorf("update with null: %+v, want the key unchanged", got)
	}
	h.doJSON(http.MethodPost, h.keysPath(k.ID.String(), "rotate"), h.admin.Secret, `null`, http.StatusOK, &got)
	if got.Secret == "" || got.Secret == k.Secret {
		t.Errorf("rotate with null: %+v, want a new secret", got)
	}

	h.run([]apiCase{
		{name: "project create", method: http.MethodPost, url: "/v1/projects", key: h.admin.Secret,
			body: `null`, status: http.StatusBadRequest, wantCode: "invalid_json"},
		{name: "webhook create", method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret,
			body: `null`, status: http.StatusBadRequest, wantCode: "invalid_json"},
		{name: "event publish", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: `null`, status: http.StatusBadRequest, wantCode: "invalid_json"},
	})
}
