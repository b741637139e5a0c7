package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// Every route that takes an Idempotency-Key answers with one database
// connection in the pool: a handler that reached the store outside its
// request's transaction (s.store instead of storeFor) would wait for a
// second connection that its own transaction holds, and with every
// connection so held the pool would never free one. Each case is also
// checked to be the whole list: every POST the OpenAPI document gives the
// Idempotency-Key parameter has a row.
func TestIdempotentRoutesNeedOneConnection(t *testing.T) {
	f := newRecoveryFixture(t)
	h := f.h
	var key models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{"name": "to rotate"}, http.StatusCreated, &key)
	inv := h.invite(h.admin.Secret, map[string]any{"emails": []string{"dora@example.com"}})[0]
	hook := f.hook.ID.String()
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		route, path string
		key         string
		body        any
		want        int
	}{
		{"/projects", "/v1/projects", h.admin.Secret, map[string]any{"name": "p-" + uuid.NewString()[:8], "taskType": "llm-base"}, http.StatusCreated},
		{"/invites/{inviteId}/accept", acceptPath(inv.ID), "", map[string]any{"token": inv.Token}, http.StatusCreated},
		{"/workspaces/{workspaceId}/invites", h.wsPath("invites"), h.admin.Secret, map[string]any{"emails": []string{"erin@example.com"}}, http.StatusCreated},
		{"/workspaces/{workspaceId}/api-keys", h.keysPath(), h.admin.Secret, map[string]any{"name": "n"}, http.StatusCreated},
		{"/workspaces/{workspaceId}/api-keys/{apiKeyId}/rotate", h.keysPath(key.ID.String(), "rotate"), h.admin.Secret, map[string]any{}, http.StatusOK},
		{"/workspaces/{workspaceId}/webhooks", h.hooksPath(), h.admin.Secret, map[string]any{"url": "https://example.com/other", "eventTypes": []string{"test.created"}}, http.StatusCreated},
		{"/workspaces/{workspaceId}/events", h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted},
		{"/workspaces/{workspaceId}/webhooks/{webhookId}/secret/rotate", h.hooksPath(hook, "secret", "rotate"), h.admin.Secret, map[string]any{}, http.StatusOK},
		{"/workspaces/{workspaceId}/webhooks/{webhookId}/test", h.hooksPath(hook, "test"), h.admin.Secret, nil, http.StatusAccepted},
		{"/workspaces/{workspaceId}/webhooks/{webhookId}/deliveries/{eventId}/redeliver", f.redeliverPath(f.hook.ID, f.dispatched), h.admin.Secret, map[string]any{}, http.StatusAccepted},
		{"/workspaces/{workspaceId}/webhooks/{webhookId}/recover", h.hooksPath(hook, "recover"), h.admin.Secret, map[string]any{"since": since}, http.StatusAccepted},
	}
	var routes []string
	for _, c := range cases {
		routes = append(routes, c.route)
	}
	for _, want := range idempotentRoutesOfTheDocument(t) {
		if !slices.Contains(routes, want) {
			t.Errorf("the document gives POST %s an Idempotency-Key, and this test has no case for it", want)
		}
	}

	h.db.SetMaxOpenConns(1)
	for i, c := range cases {
		t.Run(c.route, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := request(t, http.MethodPost, c.path, c.key, c.body, "Idempotency-Key", "one-connection-"+string(rune('a'+i)))
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, r.WithContext(ctx))
			if rec.Code != c.want {
				t.Fatalf("status %d, want %d (a handler waiting on a second connection runs out its 10 s): %s", rec.Code, c.want, rec.Body)
			}
		})
	}
}

// idempotentRoutesOfTheDocument lists the paths whose POST takes the
// Idempotency-Key parameter in api/openapi.json.
func idempotentRoutesOfTheDocument(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post *struct {
				Parameters []struct {
					Ref string `json:"$ref"`
				} `json:"parameters"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, ops := range doc.Paths {
		if ops.Post == nil {
			continue
		}
		for _, p := range ops.Post.Parameters {
			if strings.HasSuffix(p.Ref, "/Idempotency-Key") {
				out = append(out, path)
			}
		}
	}
	slices.Sort(out)
	return out
}
