package portal_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// portalPage reports whether rec is a portal page (HTML with the portal's
// security headers) that links to back.
func portalPage(t *testing.T, what string, rec *httptest.ResponseRecorder, body, back string) {
	t.Helper()
	h := rec.Header()
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		h.Get("Cache-Control") != "no-store" {
		t.Errorf("%s: not a portal page: %v", what, h)
	}
	if !strings.Contains(body, `href="`+back+`"`) {
		t.Errorf("%s: no link back to %s: %s", what, back, body)
	}
}

// Addresses under /portal/ that are no page answer a portal page: 404 for
// an unknown one, 405 with Allow for a form's address opened as a page.
func TestPortalUnknownAddressesArePortalPages(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	rec := b.do(http.MethodGet, "/portal/nope/nothing", nil)
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown address: %d, want 404", rec.Code)
	}
	portalPage(t, "unknown address", rec, rec.Body.String(), "/portal/")
	for path, back := range map[string]string{
		"/portal/endpoints/" + id + "/test":    "/portal/endpoints/" + id,
		"/portal/endpoints/" + id + "/enabled": "/portal/endpoints/" + id,
		"/portal/endpoints":                    "/portal/",
		"/portal/logout":                       "/portal/",
	} {
		rec := b.do(http.MethodGet, path, nil)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
			t.Errorf("GET %s: %d, Allow %q, want 405 with Allow: POST", path, rec.Code, rec.Header().Get("Allow"))
		}
		portalPage(t, "GET "+path, rec, rec.Body.String(), back)
	}
}

// A disabled endpoint is offered no test event, redelivery or recovery,
// and says why; a test sent anyway is refused in the page's words with a
// link back to the endpoint, where it can be enabled.
func TestPortalDisabledEndpointOffersNoDeadEnd(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	ev := h.testEvent(id)
	code := 500
	if _, _, err := h.store.Deliveries().Record(context.Background(), models.WebhookDelivery{ID: uuid.New(), SubscriptionID: uuid.MustParse(id),
		EventID: ev.ID, AttemptNumber: 1, StatusCode: &code, DateCreated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	b.post("/portal/endpoints/"+id+"/enabled", url.Values{"enabled": {"false"}})
	body := b.do(http.MethodGet, "/portal/endpoints/"+id, nil).Body.String()
	if strings.Contains(body, `id="send-test"`) || strings.Contains(body, ">Redeliver<") || strings.Contains(body, `/recover"`) ||
		!strings.Contains(body, `id="disabled-note"`) || !strings.Contains(body, `id="enable"`) {
		t.Errorf("a disabled endpoint's page offers what cannot apply, or does not say why: %s", body)
	}
	rec := b.post("/portal/endpoints/"+id+"/test", nil)
	body = rec.Body.String()
	if rec.Code != http.StatusConflict || strings.Contains(body, "PUT") || !strings.Contains(body, "Enable it on the endpoint") {
		t.Errorf("test event to a disabled endpoint: %d %s", rec.Code, body)
	}
	portalPage(t, "test to a disabled endpoint", rec, body, "/portal/endpoints/"+id)
}

// Form errors name the form's labels and speak its words, not the API's.
func TestPortalErrorsNameTheFormsLabels(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	body := b.post("/portal/endpoints", url.Values{"url": {"https://example.com/hook"}, "eventTypes": {"bogus"}, "rateLimitPerSecond": {"0"}}).Body.String()
	if !strings.Contains(body, `<a href="#rateLimitPerSecond">Rate limit</a>`) || !strings.Contains(body, `<a href="#eventTypes">Event types</a>`) ||
		strings.Contains(body, ">rateLimitPerSecond<") || strings.Contains(body, "eventTypes[0]") || strings.Contains(body, "null") {
		t.Errorf("the error summary names API fields: %s", body)
	}
	id := b.createEndpoint()
	rec := b.post("/portal/endpoints/"+id+"/rotate", url.Values{"gracePeriodHours": {"500"}})
	if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "Keep the current secret signing for: must be") ||
		strings.Contains(body, "gracePeriodHours") {
		t.Errorf("rotate with 500 hours: %d %s", rec.Code, body)
	}
	portalPage(t, "rotate with 500 hours", rec, rec.Body.String(), "/portal/endpoints/"+id)
}

// A recovery is confirmed with the number of deliveries it retries; a
// time outside the retention is explained in words, with a way back.
func TestPortalRecoverConfirmsAndExplains(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	ev := h.testEvent(id)
	code := 500
	if _, _, err := h.store.Deliveries().Record(context.Background(), models.WebhookDelivery{ID: uuid.New(), SubscriptionID: uuid.MustParse(id),
		EventID: ev.ID, AttemptNumber: 1, StatusCode: &code, DateCreated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	since := time.Now().UTC().Add(-time.Hour).Format("2006-01-02 15:04")
	rec := b.do(http.MethodGet, "/portal/endpoints/"+id+"/recover?"+url.Values{"since": {since}}.Encode(), nil)
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "Recover 1 failed delivery") {
		t.Errorf("recover confirmation: %d %s", rec.Code, body)
	}
	rec = b.do(http.MethodGet, "/portal/endpoints/"+id+"/recover?since=2000-01-01+00:00", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "deliveries are kept for 90 days") || strings.Contains(body, "DELIVERY_RETENTION") {
		t.Errorf("a time outside the retention: %d %s", rec.Code, body)
	}
	portalPage(t, "recover outside retention", rec, body, "/portal/endpoints/"+id)
	rec = b.post("/portal/endpoints/"+id+"/recover", url.Values{"since": {"2000-01-01 00:00"}})
	body = rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, "deliveries are kept for 90 days") || strings.Contains(body, "2160h") {
		t.Errorf("recover sent with a time outside the retention: %d %s", rec.Code, body)
	}
	portalPage(t, "recover sent outside retention", rec, body, "/portal/endpoints/"+id)
}

// A page past the end of a list leads back to its last page.
func TestPortalPagersLeadBack(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	for path, back := range map[string]string{
		"/portal/?page=999999999":                             `href="?page=1"`,
		"/portal/endpoints/" + id + "?page=999999999":         `href="?page=1"`,
		"/portal/endpoints/" + id + "?status=failed&page=99":  `href="?page=1&amp;status=failed"`,
		"/portal/endpoints/" + id + "?status=pending&page=99": `href="?page=1&amp;status=pending"`,
	} {
		body := b.do(http.MethodGet, path, nil).Body.String()
		if !strings.Contains(body, "There is no page") || !strings.Contains(body, back) {
			t.Errorf("%s leads nowhere: %s", path, body)
		}
	}
}

// A page watching a test event arrive stops reloading itself after a
// minute, and says so.
func TestPortalWatchingATestEventStops(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	ev := h.testEvent(id)
	page := "/portal/endpoints/" + id + "?notice=test&eventId=" + ev.ID.String()
	if body := b.do(http.MethodGet, page, nil).Body.String(); !strings.Contains(body, `data-refresh="2"`) {
		t.Fatal("a test event just sent is not watched")
	}
	if _, err := h.store.DB().ExecContext(context.Background(), `UPDATE events SET date_created = now() - interval '2 minutes' WHERE id = ?`, ev.ID); err != nil {
		t.Fatal(err)
	}
	if body := b.do(http.MethodGet, page, nil).Body.String(); strings.Contains(body, "data-refresh") || !strings.Contains(body, `id="watch-note"`) {
		t.Errorf("a test event sent two minutes ago is still watched, or the page does not say it stopped: %s", body)
	}
	other := "/portal/endpoints/" + id + "?notice=test&eventId=" + uuid.NewString()
	if body := b.do(http.MethodGet, other, nil).Body.String(); strings.Contains(body, "data-refresh") {
		t.Error("an event that does not exist is watched")
	}
}

// Ending the session leads to a page outside it: no navigation, no "End
// session"; sending the form again leads there too.
func TestPortalSessionEndedPageIsBare(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	form := url.Values{"csrf": {b.csrf}}
	rec := b.send(http.MethodPost, "/portal/logout", form)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/portal/ended" {
		t.Fatalf("logout: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if rec := b.send(http.MethodPost, "/portal/logout", form); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/portal/ended" {
		t.Errorf("logout sent again: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	body := b.do(http.MethodGet, "/portal/ended", nil).Body.String()
	if !strings.Contains(body, "Session ended") || strings.Contains(body, "End session") || strings.Contains(body, `aria-label="Portal"`) {
		t.Errorf("the session ended page: %s", body)
	}
}
