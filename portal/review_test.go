package portal_test

import (
	"net/http"
	"net/url"
	"testing"
)

// createEndpoint makes an endpoint through the portal and returns its id.
func (b *browser) createEndpoint() string {
	b.h.t.Helper()
	rec := b.post("/portal/endpoints", url.Values{"url": {"https://example.com/hook"}, "eventTypes": {"test.created"}, "enabled": {"true"}})
	m := endpointLink.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusCreated || m == nil {
		b.h.t.Fatalf("create: %d %s", rec.Code, rec.Body)
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
