package portal_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// createdLink is where creating an endpoint leads: the page of its secret.
var createdLink = regexp.MustCompile(`^/portal/endpoints/([0-9a-f-]{36})/created$`)

// createEndpoint makes an endpoint through the portal and returns its id.
func (b *browser) createEndpoint() string {
	b.h.t.Helper()
	rec := b.post("/portal/endpoints", url.Values{"url": {"https://example.com/hook"}, "eventTypes": {"test.created"}, "enabled": {"true"}})
	m := createdLink.FindStringSubmatch(rec.Header().Get("Location"))
	if rec.Code != http.StatusSeeOther || m == nil {
		b.h.t.Fatalf("create: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	return m[1]
}

// A page number so large that its offset overflows is a bad address, not
// a 500: (page-1)*perPage wrapped to a negative OFFSET, which PostgreSQL
// refuses ("OFFSET must not be negative"), on the endpoints list and on
// every filter of one endpoint's page.
func TestPortalHugePageNumbers(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	for _, path := range []string{
		"/portal/?page=9223372036854775807",
		"/portal/?page=92233720368547759",
		"/portal/endpoints/" + id + "?page=368934881474191035",
		"/portal/endpoints/" + id + "?status=failed&page=368934881474191035",
		"/portal/endpoints/" + id + "?status=pending&page=368934881474191035",
		"/portal/endpoints/" + id + "?page=9223372036854775807",
	} {
		if rec := b.do(http.MethodGet, path, nil); rec.Code >= 500 {
			t.Errorf("GET %s: %d, want no server error", path, rec.Code)
		}
	}
}

// A browser's Origin must be the portal's own origin, scheme included:
// https, except plain http on loopback (where the portal's links and
// cookie are http). The check compared the host alone, so a form posted
// from http://portal.example.com passed on a portal served over https.
func TestPortalOriginMustMatchScheme(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", http.StatusSeeOther},
		{"127.0.0.1:8080", "https://127.0.0.1:8080", http.StatusForbidden},
		{"127.0.0.1:8080", "http://127.0.0.1:8081", http.StatusForbidden},
		{"127.0.0.1:8080", "null", http.StatusForbidden},
		{"portal.example.com", "https://portal.example.com", http.StatusSeeOther},
		{"portal.example.com", "https://PORTAL.example.com", http.StatusSeeOther},
		{"portal.example.com", "http://portal.example.com", http.StatusForbidden},
		{"portal.example.com", "https://portal.example.com.evil.test", http.StatusForbidden},
		{"portal.example.com", "https://evil.test", http.StatusForbidden},
	} {
		b := h.browser()
		b.host = c.host
		if rec := b.open(h.mint(nil).URL); rec.Code != http.StatusOK || b.cookie == nil {
			t.Fatalf("open on %s: %d", c.host, rec.Code)
		}
		b.do(http.MethodGet, "/portal/", nil)
		id := b.createEndpoint()
		b.origin = c.origin
		if rec := b.post("/portal/endpoints/"+id+"/enabled", url.Values{"enabled": {"false"}}); rec.Code != c.want {
			t.Errorf("host %s, Origin %s: %d, want %d", c.host, c.origin, rec.Code, c.want)
		}
	}
}

// A read-only session is offered no form (docs/portal.md): the pages that
// exist only to hold one (add, edit, confirm a delete) answer 403 as their
// POSTs do, rather than showing a form the server will refuse.
func TestPortalReadOnlyIsOfferedNoForm(t *testing.T) {
	h := newHarness(t)
	id := h.opened(nil).createEndpoint()
	ro := h.opened(map[string]any{"readOnly": true})
	for _, path := range []string{"/portal/endpoints/new", "/portal/endpoints/" + id + "/edit", "/portal/endpoints/" + id + "/delete"} {
		rec := ro.do(http.MethodGet, path, nil)
		if rec.Code != http.StatusForbidden || strings.Count(rec.Body.String(), `<form method="post"`) != 1 { // End session only
			t.Errorf("read-only GET %s: %d, %d forms", path, rec.Code, strings.Count(rec.Body.String(), `<form method="post"`))
		}
	}
	// Another workspace's id is still 404, not 403, for a read-only session.
	if rec := ro.do(http.MethodGet, "/portal/endpoints/"+uuid.NewString()+"/edit", nil); rec.Code != http.StatusForbidden && rec.Code != http.StatusNotFound {
		t.Errorf("read-only edit of an unknown id: %d", rec.Code)
	}
}

// The error summary links each message to its field: a message about one
// event type (eventTypes[1]) links to the event types' fieldset, whose id
// is eventTypes; there is no element with the id eventTypes[1].
func TestPortalErrorSummaryLinksToFields(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	rec := b.post("/portal/endpoints", url.Values{"url": {"https://example.com/hook"}, "eventTypes": {"test.created", "bogus"}})
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(body, `<a href="#eventTypes">`) || strings.Contains(body, `href="#eventTypes%5b`) {
		t.Errorf("%d: the summary does not link to #eventTypes: %s", rec.Code, body)
	}
}

// A form over the API's body limit is refused as too large (413), not as
// a forged one (403).
func TestPortalFormTooLarge(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := b.createEndpoint()
	rec := b.post("/portal/endpoints/"+id+"/enabled", url.Values{"enabled": {"false"}, "pad": {strings.Repeat("x", 2<<20)}})
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "Form too large") {
		t.Errorf("a 2 MiB form: %d %q", rec.Code, rec.Body.String()[:min(200, rec.Body.Len())])
	}
}
