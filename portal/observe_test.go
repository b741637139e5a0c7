package portal_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/config"
)

// Portal requests are metered by route template, like the API's, never by
// raw path, and drawn from the API's rate limits per session.
func TestPortalRequestsAreMeteredAndLimited(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.RateLimitReads = config.RateLimit{Rate: 0.001, Burst: 3} // no refill during the test
	})
	b := h.opened(nil) // GET /portal/ spends one read
	b.do(http.MethodGet, "/portal/event-types", nil)
	b.do(http.MethodGet, "/portal/endpoints/00000000-0000-0000-0000-000000000000", nil)
	rec := b.do(http.MethodGet, "/portal/", nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("fourth read in a burst of 3: %d, want 429 with Retry-After", rec.Code)
	}
	// Another session has its own budget.
	if rec := h.opened(nil).do(http.MethodGet, "/portal/event-types", nil); rec.Code != http.StatusOK {
		t.Errorf("another session: %d", rec.Code)
	}

	m := httptest.NewRecorder()
	h.srv.ServeHTTP(m, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	metrics := m.Body.String()
	for _, want := range []string{
		`api_http_requests_total{code="200",method="GET",route="/portal/open"}`,
		`api_http_requests_total{code="404",method="GET",route="/portal/endpoints/{webhookId}"}`,
		`api_http_requests_total{code="429",method="GET",route="/portal/"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, "00000000-0000") {
		t.Error("a raw path is a metric label")
	}
}

// Links refused too often from one address throttle that address, as
// failed API keys do (RATE_LIMIT_AUTH_FAILURES), before any lookup.
func TestPortalLinkGuessesAreThrottled(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.RateLimitAuthFailures = config.RateLimit{Rate: 0.001, Burst: 2}
	})
	link := h.mint(nil).URL // the admin's key shares the guesser's address
	guesser := h.browser()
	for i := range 2 {
		if rec := guesser.open("http://127.0.0.1:8080/portal/open?token=olpt_guess"); rec.Code != http.StatusGone {
			t.Fatalf("guess %d: %d, want 410", i+1, rec.Code)
		}
	}
	if rec := guesser.open(link); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a valid link from a throttled address: %d, want 429 with Retry-After", rec.Code)
	}
	other := h.browser()
	other.remote = "198.51.100.7:4000"
	if rec := other.open(link); rec.Code != http.StatusOK {
		t.Errorf("the same link from another address: %d, want 200 (the refusal did not spend it)", rec.Code)
	}
}
