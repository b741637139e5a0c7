package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

var endpointLink = regexp.MustCompile(`href="/portal/endpoints/([0-9a-f-]{36})"`)

// An endpoint made in the portal follows the API's rules, shows its secret
// once, renders hostile text as text, and can be edited, disabled,
// rotated and deleted.
func TestPortalEndpointLifecycle(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	xss := `<script>alert(1)</script>`
	quoted := `https://example.com/hook?a="x'y"&b=<i>`

	// The API's rules, with the form shown again.
	rec := b.post("/portal/endpoints", url.Values{"url": {"http://example.com"}, "description": {xss}, "rateLimitPerSecond": {"0"}})
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "must be an absolute https:// URL") ||
		!strings.Contains(body, "must list at least one event type") || !strings.Contains(body, "must be from 1 to") {
		t.Fatalf("invalid form: %d %s", rec.Code, body)
	}
	if strings.Contains(body, xss) || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the description sent back is not escaped")
	}

	rec = b.follow(b.post("/portal/endpoints", url.Values{"url": {quoted}, "description": {xss}, "eventTypes": {"test.created", "tests.result.updated"}, "enabled": {"true"}, "rateLimitPerSecond": {"5"}}))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `value="whsec_`) {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Error("the secret page may be cached")
	}
	m := endpointLink.FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("no link to the endpoint: %s", rec.Body)
	}
	id := m[1]
	sub, err := h.store.Webhooks().Get(context.Background(), h.admin.WorkspaceID, uuid.MustParse(id))
	if err != nil || sub.URL != quoted || sub.Description != xss || len(sub.EventTypes) != 2 || sub.RateLimitPerSecond == nil || *sub.RateLimitPerSecond != 5 ||
		sub.CreatorID == nil || *sub.CreatorID != h.admin.UserID {
		t.Fatalf("stored %+v (%v)", sub, err)
	}

	for _, path := range []string{"/portal/", "/portal/endpoints/" + id, "/portal/endpoints/" + id + "/edit", "/portal/endpoints/" + id + "/delete",
		"/portal/endpoints/" + id + "/created", "/portal/endpoints/" + id + "/rotate"} {
		rec := b.do(http.MethodGet, path, nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || strings.Contains(body, xss) || strings.Contains(body, `"x'y"`) || strings.Contains(body, "<i>") {
			t.Errorf("%s: %d, hostile text not escaped", path, rec.Code)
		}
		if strings.Contains(body, "whsec_") {
			t.Errorf("%s shows a signing secret again", path)
		}
	}

	if rec := b.post("/portal/endpoints/"+id, url.Values{"url": {"https://example.com/v2"}, "description": {"plain"}, "eventTypes": {"test.deleted"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	if rec := b.post("/portal/endpoints/"+id+"/enabled", url.Values{"enabled": {"false"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("disable: %d %s", rec.Code, rec.Body)
	}
	sub, _ = h.store.Webhooks().Get(context.Background(), h.admin.WorkspaceID, uuid.MustParse(id))
	if sub.URL != "https://example.com/v2" || sub.Description != "plain" || sub.Enabled || sub.RateLimitPerSecond != nil {
		t.Errorf("after edit and disable: %+v", sub)
	}
	b.do(http.MethodGet, "/portal/endpoints/"+id, nil)
	if rec := b.post("/portal/endpoints/"+id+"/test", nil); rec.Code != http.StatusConflict {
		t.Errorf("test event to a disabled endpoint: %d, want 409", rec.Code)
	}
	b.do(http.MethodGet, "/portal/endpoints/"+id, nil)
	rec = b.follow(b.post("/portal/endpoints/"+id+"/rotate", url.Values{"gracePeriodHours": {"1"}}))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `value="whsec_`) ||
		!strings.Contains(rec.Body.String(), "keeps signing deliveries beside the new one for another 1 hour, until") {
		t.Errorf("rotate: %d %s", rec.Code, rec.Body)
	}
	if rec := b.post("/portal/endpoints/"+id+"/rotate", url.Values{"gracePeriodHours": {"500"}}); rec.Code != http.StatusBadRequest {
		t.Errorf("rotate with 500 hours: %d, want 400", rec.Code)
	}
	if rec := b.post("/portal/endpoints/"+id+"/delete", nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("delete: %d", rec.Code)
	}
	if rec := b.do(http.MethodGet, "/portal/endpoints/"+id, nil); rec.Code != http.StatusNotFound {
		t.Errorf("deleted endpoint: %d, want 404", rec.Code)
	}
}

// Another workspace's subscription is not found, as in the API, for every
// page and form; so is a malformed id.
func TestPortalOtherWorkspaceIsNotFound(t *testing.T) {
	h := newHarness(t)
	other, err := h.store.Bootstrap(context.Background(), "Other", "o-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	var created models.WebhookCreated
	saved := h.admin
	h.admin = other
	h.api(http.MethodPost, "/v1/workspaces/"+other.WorkspaceID.String()+"/webhooks", map[string]any{"url": "https://example.com/x", "eventTypes": []string{"test.created"}}, http.StatusCreated, &created)
	h.admin = saved
	b := h.opened(nil)
	theirs := "/portal/endpoints/" + created.ID.String()
	for _, path := range []string{theirs, theirs + "/edit", theirs + "/delete", "/portal/endpoints/not-an-id"} {
		if rec := b.do(http.MethodGet, path, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	b.do(http.MethodGet, "/portal/", nil)
	for _, path := range []string{theirs, theirs + "/enabled", theirs + "/delete", theirs + "/rotate", theirs + "/test", theirs + "/recover",
		theirs + "/deliveries/" + uuid.NewString() + "/redeliver"} {
		if rec := b.post(path, url.Values{"enabled": {"false"}, "since": {"2026-01-01T00:00"}}); rec.Code != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, rec.Code)
		}
	}
	if sub, err := h.store.Webhooks().Get(context.Background(), other.WorkspaceID, created.ID); err != nil || !sub.Enabled {
		t.Errorf("the other workspace's subscription changed: %+v %v", sub, err)
	}
}

// The one endpoint page lists attempts newest first with their outcome,
// response and error, filtered by outcome and event.
func TestPortalDeliveriesPage(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	var created models.WebhookCreated
	h.api(http.MethodPost, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/webhooks", map[string]any{"url": "https://example.com/x", "eventTypes": []string{"test.created"}}, http.StatusCreated, &created)
	ev, err := h.store.Events().CreateTest(context.Background(), h.admin.WorkspaceID, created.ID, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	code500, code200 := 500, 200
	errText := "receiver answered 500: <b>boom</b>"
	long := strings.Repeat("é", 800) // 1,600 bytes: cut at 1 KB on a character boundary
	now := time.Now().UTC()
	for i, d := range []models.WebhookDelivery{
		{AttemptNumber: 1, StatusCode: &code500, ResponseBody: long, ErrorMessage: &errText, DateCreated: now.Add(-time.Minute)},
		{AttemptNumber: 2, Success: true, StatusCode: &code200, ResponseBody: "ok", DateCreated: now},
	} {
		d.ID, d.SubscriptionID, d.EventID, d.ResponseTimeMs = uuid.New(), created.ID, ev.ID, 10*(i+1)
		if _, _, err := h.store.Deliveries().Record(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	page := "/portal/endpoints/" + created.ID.String()
	body := b.do(http.MethodGet, page, nil).Body.String()
	if i, j := strings.Index(body, `class="attempt">2<`), strings.Index(body, `class="attempt">1<`); i < 0 || j < 0 || i > j {
		t.Errorf("attempts not newest first: %d %d", i, j)
	}
	if !strings.Contains(body, "<span>Page 1 of 1</span>") || strings.Contains(body, `rel="next"`) {
		t.Error("the attempts' pager is missing or offers a next page of one")
	}
	if !strings.Contains(body, "&lt;b&gt;boom&lt;/b&gt;") || !strings.Contains(body, strings.Repeat("é", 512)+"…") || strings.Contains(body, strings.Repeat("é", 513)) {
		t.Error("error text or the first 1 KB of the response is not shown as text")
	}
	body = b.do(http.MethodGet, page+"?status=failed", nil).Body.String()
	if strings.Contains(body, `class="attempt">2<`) || !strings.Contains(body, `class="attempt">1<`) {
		t.Error("status=failed shows a success")
	}
	body = b.do(http.MethodGet, page+"?eventId="+uuid.NewString(), nil).Body.String()
	if !strings.Contains(body, "No attempts match the filter") {
		t.Error("an unknown event id shows attempts")
	}
	if rec := b.do(http.MethodGet, page+"?eventId=nope&status=bogus", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("bad filters: %d, want 400", rec.Code)
	}
	// An event stored but whose delivery has not started is pending; the
	// one with a successful attempt is not.
	ev2, err := h.store.Events().CreateTest(context.Background(), h.admin.WorkspaceID, created.ID, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body = b.do(http.MethodGet, page+"?status=pending", nil).Body.String()
	if !strings.Contains(body, "1 pending delivery") || !strings.Contains(body, ev2.ID.String()) || strings.Contains(body, ev.ID.String()) {
		t.Errorf("pending filter: %s", body)
	}
	if !strings.Contains(body, "<span>Page 1 of 1</span>") {
		t.Error("the pending list's pager is missing")
	}
	body = b.do(http.MethodGet, page+"?status=pending&eventId="+uuid.NewString(), nil).Body.String()
	if !strings.Contains(body, "No pending deliveries for this event") {
		t.Error("pending filter with another event id lists something")
	}
	// The list shows the last attempt and the success rate over 24 h.
	body = b.do(http.MethodGet, "/portal/", nil).Body.String()
	if !strings.Contains(body, "100.0% of 1 event succeeded (2 attempts)") || !strings.Contains(body, "succeeded</span> (200)") {
		t.Errorf("endpoint list health missing: %s", body)
	}
}

// A session whose minting user is gone still creates endpoints, with no
// creator recorded.
func TestPortalCreatorDeleted(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	if _, err := h.store.DB().ExecContext(context.Background(), `UPDATE portal_sessions SET created_by = NULL`); err != nil {
		t.Fatal(err)
	}
	b.do(http.MethodGet, "/portal/endpoints/new", nil)
	rec := b.post("/portal/endpoints", url.Values{"url": {"https://example.com/h"}, "eventTypes": {"test.created"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var creator *uuid.UUID
	if err := h.store.DB().NewRaw(`SELECT creator_id FROM webhook_subscriptions`).Scan(context.Background(), &creator); err != nil || creator != nil {
		t.Errorf("creator %v (%v), want none", creator, err)
	}
}
