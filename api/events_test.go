package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/models"
)

func (h *harness) eventsPath() string {
	return "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/events"
}

// objectOfSize is a JSON object of exactly n bytes.
func objectOfSize(n int) string {
	return `{"a":"` + strings.Repeat("x", n-len(`{"a":""}`)) + `"}`
}

func TestPublishEventBadRequests(t *testing.T) {
	h := newHarness(t)
	bad := func(name string, body any, code, field string) apiCase {
		return apiCase{name: name, method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret, body: body, status: 400, wantCode: code, wantField: field}
	}
	data := map[string]any{"id": 1}
	h.run([]apiCase{
		bad("type missing", map[string]any{"data": data}, "validation_failed", "type"),
		bad("type null", map[string]any{"type": nil, "data": data}, "validation_failed", "type"),
		bad("type unknown", map[string]any{"type": "test.exploded", "data": data}, "validation_failed", "type"),
		bad("type not a string", map[string]any{"type": 3, "data": data}, "validation_failed", "type"),
		bad("data missing", map[string]any{"type": "test.created"}, "validation_failed", "data"),
		bad("data null", map[string]any{"type": "test.created", "data": nil}, "validation_failed", "data"),
		bad("data an array", map[string]any{"type": "test.created", "data": []int{1}}, "validation_failed", "data"),
		bad("data a string", map[string]any{"type": "test.created", "data": "x"}, "validation_failed", "data"),
		bad("data a number", map[string]any{"type": "test.created", "data": 7}, "validation_failed", "data"),
		bad("data over 256 KiB", `{"type":"test.created","data":`+objectOfSize(256<<10+1)+`}`, "validation_failed", "data"),
		bad("data with NUL in a value", `{"type":"test.created","data":{"a":"x\u0000"}}`, "validation_failed", "data"),
		bad("data with NUL in a key", `{"type":"test.created","data":{"\u0000":1}}`, "validation_failed", "data"),
		bad("data with a huge number", `{"type":"test.created","data":{"n":1e1000000}}`, "validation_failed", "data"),
		// Small as sent, megabytes as delivered: jsonb writes numbers out in full.
		bad("data that expands past 256 KiB", `{"type":"test.created","data":{"a":1e131071,"b":1e131071,"c":-1e-1000}}`, "validation_failed", "data"),
		bad("data with a tiny number written long", `{"type":"test.created","data":{"n":1e-300000}}`, "validation_failed", "data"),
		bad("unknown field", map[string]any{"type": "test.created", "data": data, "id": uuid.NewString()}, "validation_failed", "id"),
		bad("empty body", "", "invalid_json", ""),
		bad("malformed", `{"type":"test.created","data":{`, "invalid_json", ""),
		{name: "body over 1 MiB", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: `{"type":"test.created","data":` + objectOfSize(1<<20+10) + `}`, status: 413, wantCode: "body_too_large"},
	})
	var n int
	if err := h.db.NewSelect().TableExpr("events").ColumnExpr("count(*)").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("%d events stored by bad requests (%v)", n, err)
	}
}

// Without Temporal the event is still accepted and stored, left in the
// outbox (dispatched_at NULL) for the worker's sweeper.
func TestPublishEventWithoutTemporal(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	h.createHook(map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"tests.result.updated"}})
	body := `{"type":"tests.result.updated","data":` + objectOfSize(256<<10) + `}` // exactly the limit
	rec := h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, body)
	if rec.Code != http.StatusAccepted || hookMemberNames(t, rec.Body.Bytes()) != "id" {
		t.Fatalf("publish: %d %s", rec.Code, rec.Body)
	}
	var acc models.EventAccepted
	hookDecode(t, rec.Body.Bytes(), &acc)
	ev, err := h.store.Events().Get(context.Background(), acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.WorkspaceID != h.admin.WorkspaceID || ev.Type != models.EventTestsResultUpdated || ev.DispatchedAt != nil || len(ev.Data) < 256<<10-10 {
		t.Fatalf("stored %+v (data %d bytes)", ev.DispatchedAt, len(ev.Data))
	}
}

// An event no subscription takes needs no workflow: it leaves the outbox
// at once, even without Temporal, and its recipients are recorded empty.
func TestPublishEventWithoutRecipients(t *testing.T) {
	h := newHarness(t)
	var acc models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.deleted", "data": map[string]any{}}, http.StatusAccepted, &acc)
	ev, err := h.store.Events().Get(context.Background(), acc.ID)
	if err != nil || ev.DispatchedAt == nil || ev.Recipients == nil || len(ev.Recipients) != 0 {
		t.Fatalf("event %+v, %v: want dispatched with no recipients", ev, err)
	}
}

// Publishing never waits for Temporal: with Temporal unreachable the event
// is stored, answered at once (the previous design spent up to its 2 s
// start timeout here on every publish), and left in the outbox for the
// workers' dispatchers.
func TestPublishEventTemporalUnreachable(t *testing.T) {
	tc, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Temporal = tc })
	h.createHook(map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}})
	for range 3 {
		start := time.Now()
		var acc models.EventAccepted
		h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{"k": "v"}}, http.StatusAccepted, &acc)
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("publish took %v with Temporal down: it must not wait for Temporal", took)
		}
		ev, err := h.store.Events().Get(context.Background(), acc.ID)
		if err != nil || ev.DispatchedAt != nil || len(ev.Recipients) != 1 {
			t.Fatalf("event %+v, %v: want stored, undispatched, with its one recipient", ev, err)
		}
	}
	if strings.Contains(h.logs.String(), "Warn") || strings.Contains(h.logs.String(), "WARN") {
		t.Errorf("publishing logged a warning: %s", h.logs.String())
	}
}
