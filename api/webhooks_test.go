package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/models"
)

// withWebhookKey gives the harness a WEBHOOK_SECRET_KEY.
func withWebhookKey(d *api.Deps) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d.Config.WebhookSecretKeys = [][]byte{key}
}

// hooksPath is the webhooks collection of the harness's workspace, or a
// path under it.
func (h *harness) hooksPath(rest ...string) string {
	p := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/webhooks"
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

func (h *harness) createHook(body any) models.WebhookCreated {
	h.t.Helper()
	var c models.WebhookCreated
	h.doJSON(http.MethodPost, h.hooksPath(), h.admin.Secret, body, http.StatusCreated, &c)
	return c
}

func hookMemberNames(t *testing.T, raw []byte) string {
	m := members(t, raw)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// hookDecode decodes a response body.
func hookDecode(t *testing.T, raw []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

const subscriptionMembers = "dateCreated,dateUpdated,description,enabled,eventTypes,id,url,workspaceId,creatorId,disabledReason,disabledAt,rateLimitPerSecond,headers,sensitiveHeaders,signatureScheme"

func hookSorted(s string) string {
	parts := strings.Split(s, ",")
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func TestWebhookLifecycle(t *testing.T) {
	h := newHarness(t, withWebhookKey)

	rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, map[string]any{
		"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created", "tests.result.updated"}, "description": "CI",
	})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(t, rec.Body.Bytes()); got != "id,secret,signatureScheme" {
		t.Fatalf("creation result has members %s, want id,secret,signatureScheme", got)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("creation result Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
	created := models.WebhookCreated{}
	hookDecode(t, rec.Body.Bytes(), &created)
	if !strings.HasPrefix(created.Secret, "whsec_") || len(created.Secret) < 6+32 {
		t.Fatalf("secret %q", created.Secret)
	}

	rec = h.do(http.MethodGet, h.hooksPath(created.ID.String()), h.admin.Secret, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("get: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(t, rec.Body.Bytes()); got != hookSorted(subscriptionMembers) {
		t.Fatalf("subscription members %s, want %s", got, hookSorted(subscriptionMembers))
	}
	if strings.Contains(rec.Body.String(), created.Secret) || strings.Contains(rec.Body.String(), "whsec_") {
		t.Fatal("the subscription carries the secret")
	}
	var sub models.WebhookSubscription
	hookDecode(t, rec.Body.Bytes(), &sub)
	if sub.URL != "https://hooks.example.com/in" || !sub.Enabled || sub.Description != "CI" || len(sub.EventTypes) != 2 ||
		sub.WorkspaceID != h.admin.WorkspaceID || sub.CreatorID == nil || *sub.CreatorID != h.admin.UserID {
		t.Fatalf("subscription %+v", sub)
	}

	// PUT changes only what it names.
	var up models.WebhookSubscription
	h.doJSON(http.MethodPut, h.hooksPath(created.ID.String()), h.admin.Secret, map[string]any{"enabled": false}, http.StatusOK, &up)
	if up.Enabled || up.URL != sub.URL || up.Description != "CI" || len(up.EventTypes) != 2 || !up.DateUpdated.After(sub.DateUpdated) {
		t.Fatalf("after disabling: %+v", up)
	}
	h.doJSON(http.MethodPut, h.hooksPath(created.ID.String()), h.admin.Secret,
		map[string]any{"url": "https://other.example.com/x", "eventTypes": []string{"test.deleted"}, "description": nil}, http.StatusOK, &up)
	if up.Enabled || up.URL != "https://other.example.com/x" || up.Description != "" || len(up.EventTypes) != 1 || up.EventTypes[0] != models.EventTestDeleted {
		t.Fatalf("after update: %+v", up)
	}

	// A second subscription, created disabled; the list is newest first.
	second := h.createHook(map[string]any{"url": "https://b.example.com", "eventTypes": []string{"test.updated"}, "enabled": false})
	var page models.Page[models.WebhookSubscription]
	rec = h.do(http.MethodGet, h.hooksPath()+"?perPage=1", h.admin.Secret, nil)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "whsec_") {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	hookDecode(t, rec.Body.Bytes(), &page)
	if page.Meta != (models.PageMeta{Page: 1, PerPage: 1, TotalItems: 2, TotalPages: 2}) || len(page.Items) != 1 || page.Items[0].ID != second.ID || page.Items[0].Enabled {
		t.Fatalf("list page: %+v", page)
	}
	var deliveries models.Page[models.WebhookDelivery]
	h.doJSON(http.MethodGet, h.hooksPath(second.ID.String(), "deliveries"), h.admin.Secret, nil, http.StatusOK, &deliveries)
	if deliveries.Meta.TotalItems != 0 || deliveries.Items == nil {
		t.Fatalf("deliveries of a new subscription: %+v", deliveries)
	}

	rec = h.do(http.MethodDelete, h.hooksPath(created.ID.String()), h.admin.Secret, nil)
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("delete: %d %q", rec.Code, rec.Body)
	}
	h.run([]apiCase{
		{name: "get after delete", method: http.MethodGet, url: h.hooksPath(created.ID.String()), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "delete again", method: http.MethodDelete, url: h.hooksPath(created.ID.String()), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "deliveries after delete", method: http.MethodGet, url: h.hooksPath(created.ID.String(), "deliveries"), key: h.admin.Secret, status: 404, wantCode: "not_found"},
	})
}

func TestWebhookBadRequests(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	one := h.hooksPath(hook.ID.String())
	ok := []string{"test.created"}
	create := func(name string, body any, field string) apiCase {
		code := "validation_failed"
		if field == "" {
			code = "invalid_json"
		}
		return apiCase{name: "create: " + name, method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret, body: body, status: 400, wantCode: code, wantField: field}
	}
	update := func(name string, body any, code, field string) apiCase {
		return apiCase{name: "update: " + name, method: http.MethodPut, url: one, key: h.admin.Secret, body: body, status: 400, wantCode: code, wantField: field}
	}
	long := "https://example.com/" + strings.Repeat("a", 2049-len("https://example.com/"))
	cases := []apiCase{
		create("url missing", map[string]any{"eventTypes": ok}, "url"),
		create("url empty", map[string]any{"url": "", "eventTypes": ok}, "url"),
		create("url null", map[string]any{"url": nil, "eventTypes": ok}, "url"),
		create("url not a string", map[string]any{"url": 42, "eventTypes": ok}, "url"),
		create("url http", map[string]any{"url": "http://example.com/in", "eventTypes": ok}, "url"),
		create("url relative", map[string]any{"url": "/in", "eventTypes": ok}, "url"),
		create("url no host", map[string]any{"url": "https:///in", "eventTypes": ok}, "url"),
		create("url opaque", map[string]any{"url": "https:example.com", "eventTypes": ok}, "url"),
		create("url other scheme", map[string]any{"url": "ftp://example.com", "eventTypes": ok}, "url"),
		create("url credentials", map[string]any{"url": "https://user:pw@example.com/in", "eventTypes": ok}, "url"),
		create("url user only", map[string]any{"url": "https://token@example.com/in", "eventTypes": ok}, "url"),
		create("url 2049 characters", map[string]any{"url": long, "eventTypes": ok}, "url"),
		create("url with a space", map[string]any{"url": "https://example.com/a b", "eventTypes": ok}, "url"),
		create("url bad port", map[string]any{"url": "https://example.com:99999/", "eventTypes": ok}, "url"),
		create("url well-known port (SSH)", map[string]any{"url": "https://example.com:22/", "eventTypes": ok}, "url"),
		create("url well-known port (SMTP)", map[string]any{"url": "https://example.com:25/", "eventTypes": ok}, "url"),
		create("url garbage", map[string]any{"url": "https://exa%zzmple.com", "eventTypes": ok}, "url"),
		create("url loopback", map[string]any{"url": "https://127.0.0.1/in", "eventTypes": ok}, "url"),
		create("url localhost", map[string]any{"url": "https://localhost:8443/in", "eventTypes": ok}, "url"),
		create("url IPv6 loopback", map[string]any{"url": "https://[::1]/in", "eventTypes": ok}, "url"),
		create("url metadata", map[string]any{"url": "https://169.254.169.254/latest", "eventTypes": ok}, "url"),
		create("url private", map[string]any{"url": "https://10.1.2.3/in", "eventTypes": ok}, "url"),
		create("eventTypes missing", map[string]any{"url": "https://example.com"}, "eventTypes"),
		create("eventTypes null", map[string]any{"url": "https://example.com", "eventTypes": nil}, "eventTypes"),
		create("eventTypes empty", map[string]any{"url": "https://example.com", "eventTypes": []string{}}, "eventTypes"),
		create("eventTypes a string", map[string]any{"url": "https://example.com", "eventTypes": "test.created"}, "eventTypes"),
		create("eventTypes unknown", map[string]any{"url": "https://example.com", "eventTypes": []string{"test.created", "test.exploded"}}, "eventTypes[1]"),
		create("eventTypes duplicate", map[string]any{"url": "https://example.com", "eventTypes": []string{"test.created", "test.created"}}, "eventTypes[1]"),
		create("eventTypes not strings", map[string]any{"url": "https://example.com", "eventTypes": []any{1}}, "eventTypes"),
		create("description 501", map[string]any{"url": "https://example.com", "eventTypes": ok, "description": strings.Repeat("é", 501)}, "description"),
		create("description not a string", map[string]any{"url": "https://example.com", "eventTypes": ok, "description": 5}, "description"),
		create("description NUL", map[string]any{"url": "https://example.com", "eventTypes": ok, "description": "a\u0000b"}, "description"),
		create("enabled not a boolean", map[string]any{"url": "https://example.com", "eventTypes": ok, "enabled": "yes"}, "enabled"),
		create("unknown field", map[string]any{"url": "https://example.com", "eventTypes": ok, "secret": "whsec_x"}, "secret"),
		create("empty body", "", ""),
		create("malformed JSON", `{"url":`, ""),
		create("not an object", `[]`, ""),
		create("two objects", `{"url":"https://example.com","eventTypes":["test.created"]}{}`, ""),

		update("empty object", map[string]any{}, "empty_update", ""),
		update("empty body", "", "invalid_json", ""),
		update("url null", map[string]any{"url": nil}, "validation_failed", "url"),
		update("url http", map[string]any{"url": "http://example.com"}, "validation_failed", "url"),
		update("url credentials", map[string]any{"url": "https://a:b@example.com"}, "validation_failed", "url"),
		update("url too long", map[string]any{"url": long}, "validation_failed", "url"),
		update("eventTypes null", map[string]any{"eventTypes": nil}, "validation_failed", "eventTypes"),
		update("eventTypes empty", map[string]any{"eventTypes": []string{}}, "validation_failed", "eventTypes"),
		update("eventTypes unknown", map[string]any{"eventTypes": []string{"nope"}}, "validation_failed", "eventTypes[0]"),
		update("eventTypes duplicate", map[string]any{"eventTypes": []string{"test.deleted", "test.deleted"}}, "validation_failed", "eventTypes[1]"),
		update("description 501", map[string]any{"description": strings.Repeat("x", 501)}, "validation_failed", "description"),
		update("enabled null", map[string]any{"enabled": nil}, "validation_failed", "enabled"),
		update("enabled a string", map[string]any{"enabled": "false"}, "validation_failed", "enabled"),
		update("unknown field", map[string]any{"enabled": true, "secret": "x"}, "validation_failed", "secret"),

		{name: "list: perPage 0", method: http.MethodGet, url: h.hooksPath() + "?perPage=0", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "perPage"},
		{name: "list: perPage 101", method: http.MethodGet, url: h.hooksPath() + "?perPage=101", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "perPage"},
		{name: "list: page abc", method: http.MethodGet, url: h.hooksPath() + "?page=abc", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "page"},
		{name: "deliveries: page 0", method: http.MethodGet, url: h.hooksPath(hook.ID.String(), "deliveries") + "?page=0", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "page"},
		{name: "get: malformed id", method: http.MethodGet, url: h.hooksPath("not-a-uuid"), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "get: unknown id", method: http.MethodGet, url: h.hooksPath(uuid.NewString()), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "update: unknown id", method: http.MethodPut, url: h.hooksPath(uuid.NewString()), key: h.admin.Secret, body: map[string]any{"enabled": true}, status: 404, wantCode: "not_found"},
		{name: "create: no credentials", method: http.MethodPost, url: h.hooksPath(), body: map[string]any{"url": "https://example.com", "eventTypes": ok}, status: 401, wantCode: "missing_credentials"},
		{name: "create: wrong content type", method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret, body: `{}`, header: []string{"Content-Type", "text/plain"}, status: 415, wantCode: "unsupported_media_type"},
	}
	h.run(cases)

	// Nothing was half-written: the one subscription is unchanged.
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, one, h.admin.Secret, nil, http.StatusOK, &sub)
	if sub.URL != "https://a.example.com" || len(sub.EventTypes) != 1 || !sub.Enabled {
		t.Fatalf("after bad updates: %+v", sub)
	}
	var page models.Page[models.WebhookSubscription]
	h.doJSON(http.MethodGet, h.hooksPath(), h.admin.Secret, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 1 {
		t.Fatalf("%d subscriptions after bad creates, want 1", page.Meta.TotalItems)
	}
}

// With WEBHOOK_ALLOW_PRIVATE_NETWORKS, local receivers are fine.
func TestWebhookPrivateURLsWhenAllowed(t *testing.T) {
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.WebhookAllowPrivateNetworks = true })
	for _, u := range []string{"https://127.0.0.1:8443/in", "https://localhost/in", "https://[::1]/x", "https://10.0.0.5/in"} {
		h.createHook(map[string]any{"url": u, "eventTypes": []string{"test.created"}})
	}
}

func TestWebhookWithoutSecretKey(t *testing.T) {
	h := newHarness(t) // no WEBHOOK_SECRET_KEY
	h.run([]apiCase{{
		name: "create", method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret,
		body: map[string]any{"url": "https://example.com", "eventTypes": []string{"test.created"}}, status: 503, wantCode: "webhook_secrets_unavailable",
	}})
}

// Every webhook and event endpoint is for admins: a member's key gets 403,
// even for paths that would be 404 or 400 for an admin.
func TestWebhookEndpointsAreForAdmins(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	member := h.addKey(models.RoleMember)
	ws := "/v1/workspaces/" + h.admin.WorkspaceID.String()
	var cases []apiCase
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/webhooks"}, {http.MethodGet, "/webhooks"},
		{http.MethodGet, "/webhooks/" + hook.ID.String()}, {http.MethodPut, "/webhooks/" + hook.ID.String()},
		{http.MethodDelete, "/webhooks/" + hook.ID.String()}, {http.MethodGet, "/webhooks/" + hook.ID.String() + "/deliveries"},
		{http.MethodGet, "/webhooks/" + uuid.NewString()}, {http.MethodPost, "/events"},
	} {
		var body any
		if c.method == http.MethodPost || c.method == http.MethodPut {
			body = map[string]any{"enabled": false}
		}
		cases = append(cases, apiCase{name: c.method + " " + c.path, method: c.method, url: ws + c.path, key: member.Secret, body: body, status: 403, wantCode: "forbidden"})
	}
	h.run(cases)
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, h.hooksPath(hook.ID.String()), h.admin.Secret, nil, http.StatusOK, &sub)
	if !sub.Enabled {
		t.Fatal("a member's PUT changed the subscription")
	}
}

// Another workspace's subscription, and another workspace's path, are 404.
func TestWebhookOtherWorkspace(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	theirs := models.WebhookCreated{}
	h.doJSON(http.MethodPost, "/v1/workspaces/"+other.WorkspaceID.String()+"/webhooks", other.Secret,
		map[string]any{"url": "https://theirs.example.com", "eventTypes": []string{"test.created"}}, http.StatusCreated, &theirs)
	id := theirs.ID.String()
	h.run([]apiCase{
		{name: "get theirs", method: http.MethodGet, url: h.hooksPath(id), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "update theirs", method: http.MethodPut, url: h.hooksPath(id), key: h.admin.Secret, body: map[string]any{"enabled": false}, status: 404, wantCode: "not_found"},
		{name: "delete theirs", method: http.MethodDelete, url: h.hooksPath(id), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "their deliveries", method: http.MethodGet, url: h.hooksPath(id, "deliveries"), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "their workspace path", method: http.MethodGet, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/webhooks/" + id, key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "publish to their workspace", method: http.MethodPost, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/events", key: h.admin.Secret,
			body: map[string]any{"type": "test.created", "data": map[string]any{}}, status: 404, wantCode: "not_found"},
	})
	var mine models.Page[models.WebhookSubscription]
	h.doJSON(http.MethodGet, h.hooksPath(), h.admin.Secret, nil, http.StatusOK, &mine)
	if mine.Meta.TotalItems != 0 {
		t.Fatalf("another workspace's subscription is listed: %+v", mine)
	}
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, "/v1/workspaces/"+other.WorkspaceID.String()+"/webhooks/"+id, other.Secret, nil, http.StatusOK, &sub)
	if !sub.Enabled {
		t.Fatal("another workspace's PUT changed the subscription")
	}
}
