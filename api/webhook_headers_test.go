package api_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// Every rule of custom headers is a 400 in the one error shape naming the
// field, on create and on update, never a 500; no error echoes a value.
func TestWebhookHeadersValidation(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	hook := h.createHook(map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"},
		"headers": map[string]string{"X-Api-Key": "k_secret_1234"}, "sensitiveHeaders": []string{"X-Api-Key"}})
	one := h.hooksPath(hook.ID.String())
	body := func(headers any, sensitive ...string) map[string]any {
		b := map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}, "headers": headers}
		if sensitive != nil {
			b["sensitiveHeaders"] = sensitive
		}
		return b
	}
	twentyOne := map[string]string{}
	for i := range 21 {
		twentyOne[fmt.Sprintf("X-H%d", i)] = "v"
	}
	type rule struct {
		name    string
		headers any // a map, or a raw JSON object
		sens    []string
		field   string
	}
	rules := []rule{
		{"more than 20", twentyOne, nil, "headers"},
		{"name not a token", map[string]string{"X Api": "v"}, nil, "headers"},
		{"name with a colon", map[string]string{"X-Api:": "v"}, nil, "headers"},
		{"empty name", map[string]string{"": "v"}, nil, "headers"},
		{"name over 128", map[string]string{strings.Repeat("x", 129): "v"}, nil, "headers"},
		{"case-insensitive duplicate", `{"X-Tenant":"a","x-tenant":"b"}`, nil, "headers.x-tenant"},
		{"exact duplicate", `{"X-Tenant":"a","X-Tenant":"b"}`, nil, "headers.X-Tenant"},
		{"Connection", map[string]string{"Connection": "close"}, nil, "headers.Connection"},
		{"Keep-Alive", map[string]string{"keep-alive": "5"}, nil, "headers.keep-alive"},
		{"Proxy-Authenticate", map[string]string{"Proxy-Authenticate": "Basic"}, nil, "headers.Proxy-Authenticate"},
		{"Proxy-Authorization", map[string]string{"PROXY-AUTHORIZATION": "Basic x"}, nil, "headers.PROXY-AUTHORIZATION"},
		{"TE", map[string]string{"TE": "trailers"}, nil, "headers.TE"},
		{"Trailer", map[string]string{"Trailer": "X"}, nil, "headers.Trailer"},
		{"Transfer-Encoding", map[string]string{"Transfer-Encoding": "chunked"}, nil, "headers.Transfer-Encoding"},
		{"Upgrade", map[string]string{"Upgrade": "h2c"}, nil, "headers.Upgrade"},
		{"Host", map[string]string{"host": "evil.example"}, nil, "headers.host"},
		{"Content-Type", map[string]string{"Content-Type": "text/plain"}, nil, "headers.Content-Type"},
		{"Content-Length", map[string]string{"content-length": "1"}, nil, "headers.content-length"},
		{"webhook-signature", map[string]string{"Webhook-Signature": "v1,x"}, nil, "headers.Webhook-Signature"},
		{"webhook-id", map[string]string{"webhook-id": "x"}, nil, "headers.webhook-id"},
		{"traceparent", map[string]string{"Traceparent": "00-x"}, nil, "headers.Traceparent"},
		{"tracestate", map[string]string{"tracestate": "a=b"}, nil, "headers.tracestate"},
		{"User-Agent", map[string]string{"User-Agent": "me"}, nil, "headers.User-Agent"},
		{"Accept-Encoding", map[string]string{"Accept-Encoding": "br"}, nil, "headers.Accept-Encoding"},
		{"Expect", map[string]string{"Expect": "100-continue"}, nil, "headers.Expect"},
		{"value with CR LF", map[string]string{"X-A": "a\r\nX-Injected: 1"}, nil, "headers.X-A"},
		{"value with LF", map[string]string{"X-A": "a\nb"}, nil, "headers.X-A"},
		{"value with NUL", map[string]string{"X-A": "a\x00b"}, nil, "headers.X-A"},
		{"value not ASCII", map[string]string{"X-A": "café"}, nil, "headers.X-A"},
		{"empty value", map[string]string{"X-A": ""}, nil, "headers.X-A"},
		{"value over 1024", map[string]string{"X-A": strings.Repeat("v", 1025)}, nil, "headers.X-A"},
		{"value with a leading space", map[string]string{"X-A": " v"}, nil, "headers.X-A"},
		{"value with a trailing tab", map[string]string{"X-A": "v\t"}, nil, "headers.X-A"},
		{"value not a string", `{"X-A":1}`, nil, "headers"},
		{"headers not an object", `["X-A"]`, nil, "headers"},
		{"sensitive name not among headers", map[string]string{"X-A": "v"}, []string{"X-B"}, "sensitiveHeaders[0]"},
		{"sensitive name twice", map[string]string{"X-A": "v"}, []string{"X-A", "x-a"}, "sensitiveHeaders[1]"},
		{"mask of a plain header", map[string]string{"X-A": models.WebhookHeaderMask}, nil, "headers.X-A"},
	}
	var cases []apiCase
	for _, r := range rules {
		var b any = body(r.headers, r.sens...)
		if raw, ok := r.headers.(string); ok {
			b = `{"url":"https://hooks.example.com/in","eventTypes":["test.created"],"headers":` + raw + `}`
		}
		cases = append(cases, apiCase{name: "create: " + r.name, method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret,
			body: b, status: http.StatusBadRequest, wantCode: "validation_failed", wantField: r.field})
		u := map[string]any{"headers": r.headers}
		if r.sens != nil {
			u["sensitiveHeaders"] = r.sens
		}
		var ub any = u
		if raw, ok := r.headers.(string); ok {
			ub = `{"headers":` + raw + `}`
		}
		cases = append(cases, apiCase{name: "update: " + r.name, method: http.MethodPut, url: one, key: h.admin.Secret,
			body: ub, status: http.StatusBadRequest, wantCode: "validation_failed", wantField: r.field})
	}
	cases = append(cases,
		apiCase{name: "create: the mask as a sensitive value", method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret,
			body: body(map[string]string{"X-A": models.WebhookHeaderMask}, "X-A"), status: http.StatusBadRequest, wantCode: "validation_failed", wantField: "headers.X-A"},
		apiCase{name: "update: the mask with nothing stored to keep", method: http.MethodPut, url: one, key: h.admin.Secret,
			body:   map[string]any{"headers": map[string]string{"X-Other": models.WebhookHeaderMask}, "sensitiveHeaders": []string{"X-Other"}},
			status: http.StatusBadRequest, wantCode: "validation_failed", wantField: "headers.X-Other"},
		apiCase{name: "update: sensitiveHeaders without headers", method: http.MethodPut, url: one, key: h.admin.Secret,
			body: map[string]any{"sensitiveHeaders": []string{"X-Api-Key"}}, status: http.StatusBadRequest, wantCode: "validation_failed", wantField: "sensitiveHeaders"},
	)
	h.run(cases)
	if strings.Contains(h.logs.String(), "k_secret_1234") || strings.Contains(h.logs.String(), "X-Injected") {
		t.Error("a header value reached the log")
	}
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, one, h.admin.Secret, nil, http.StatusOK, &sub)
	if want := map[string]string{"X-Api-Key": models.WebhookHeaderMask}; !reflect.DeepEqual(sub.Headers, want) {
		t.Fatalf("after refused updates: %v, want %v", sub.Headers, want)
	}
}

// Responses show plain values and mask sensitive ones; an update without
// headers keeps them, the mask keeps a stored value, null removes all, and
// the value never appears in a response.
func TestWebhookHeadersLifecycle(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	const key = "k_live_5f2a9c"
	hook := h.createHook(map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"},
		"headers": map[string]string{"X-Api-Key": key, "X-Tenant": "acme", "Authorization": "Bearer gw"}, "sensitiveHeaders": []string{"x-api-key"}})
	one := h.hooksPath(hook.ID.String())
	get := func() models.WebhookSubscription {
		t.Helper()
		rec := h.do(http.MethodGet, one, h.admin.Secret, nil)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), key) {
			t.Fatalf("get: %d %s", rec.Code, rec.Body)
		}
		var sub models.WebhookSubscription
		hookDecode(t, rec.Body.Bytes(), &sub)
		return sub
	}
	sub := get()
	want := map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Tenant": "acme", "Authorization": "Bearer gw"}
	if !reflect.DeepEqual(sub.Headers, want) || !reflect.DeepEqual(sub.SensitiveHeaders, []string{"X-Api-Key"}) {
		t.Fatalf("created: %v %v", sub.Headers, sub.SensitiveHeaders)
	}
	var stored string
	if err := h.db.NewRaw(`SELECT headers::text FROM webhook_subscriptions WHERE id = ?`, hook.ID).Scan(t.Context(), &stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, key) || !strings.Contains(stored, "acme") {
		t.Fatalf("stored headers %s: the sensitive value is in the clear, or the plain one is not", stored)
	}

	// A read-modify-write round trip: the masked value comes back and keeps.
	var up models.WebhookSubscription
	h.doJSON(http.MethodPut, one, h.admin.Secret, map[string]any{
		"headers": map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Tenant": "globex"}, "sensitiveHeaders": sub.SensitiveHeaders,
	}, http.StatusOK, &up)
	if want := map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Tenant": "globex"}; !reflect.DeepEqual(up.Headers, want) {
		t.Fatalf("after the round trip: %v", up.Headers)
	}
	var after string
	_ = h.db.NewRaw(`SELECT headers::text FROM webhook_subscriptions WHERE id = ?`, hook.ID).Scan(t.Context(), &after)
	if !strings.Contains(after, sealedOf(t, stored, "X-Api-Key")) {
		t.Fatalf("the kept value was sealed anew or lost: %s", after)
	}

	// Other members leave headers alone; null removes them.
	h.doJSON(http.MethodPut, one, h.admin.Secret, map[string]any{"description": "x"}, http.StatusOK, &up)
	if len(up.Headers) != 2 {
		t.Fatalf("an update without headers changed them: %v", up.Headers)
	}
	var cleared models.WebhookSubscription
	h.doJSON(http.MethodPut, one, h.admin.Secret, `{"headers":null}`, http.StatusOK, &cleared)
	if cleared.Headers == nil || len(cleared.Headers) != 0 || cleared.SensitiveHeaders == nil || len(cleared.SensitiveHeaders) != 0 {
		t.Fatalf("after headers: null: %v %v", cleared.Headers, cleared.SensitiveHeaders)
	}
}

// sealedOf is the base64 sealed value of the header name in a stored column.
func sealedOf(t *testing.T, column, name string) string {
	t.Helper()
	var entries []struct {
		Name   string `json:"name"`
		Sealed string `json:"sealed"`
	}
	hookDecode(t, []byte(column), &entries)
	for _, e := range entries {
		if e.Name == name && e.Sealed != "" {
			return e.Sealed
		}
	}
	t.Fatalf("no sealed %s in %s", name, column)
	return ""
}

// Without WEBHOOK_SECRET_KEY a sensitive header cannot be stored: 503, as
// for signing secrets; a plain one can.
func TestWebhookHeadersNeedTheKeyRing(t *testing.T) {
	h := newHarness(t)
	sub, err := h.store.Webhooks().Create(t.Context(), uuid.New(), models.NewWebhook{WorkspaceID: h.admin.WorkspaceID, CreatorID: h.admin.UserID,
		URL: "https://hooks.example.com/in", EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	one := h.hooksPath(sub.ID.String())
	h.run([]apiCase{
		{name: "sensitive", method: http.MethodPut, url: one, key: h.admin.Secret,
			body:   map[string]any{"headers": map[string]string{"X-Api-Key": "k"}, "sensitiveHeaders": []string{"X-Api-Key"}},
			status: http.StatusServiceUnavailable, wantCode: "webhook_secrets_unavailable"},
		{name: "plain", method: http.MethodPut, url: one, key: h.admin.Secret,
			body: map[string]any{"headers": map[string]string{"X-Tenant": "acme"}}, status: http.StatusOK},
	})
}
