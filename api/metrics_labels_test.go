package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// Any unauthenticated client can send arbitrary method tokens; labelled
// as sent, each would become a new series in api_http_requests_total and
// api_http_request_duration_seconds. Unknown methods share the label "other".
func TestMetricsMethodLabelIsBounded(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 50; i++ {
		r := httptest.NewRequest(http.MethodGet, "/v1/projects", nil)
		r.Method = fmt.Sprintf("X%04d", i)
		h.srv.ServeHTTP(httptest.NewRecorder(), r)
	}
	rec := h.do(http.MethodGet, "/metrics", "", nil)
	methods := map[string]bool{}
	for _, m := range regexp.MustCompile(`api_http_requests_total\{[^}]*method="([^"]*)"`).FindAllStringSubmatch(rec.Body.String(), -1) {
		methods[m[1]] = true
	}
	if len(methods) > 10 {
		t.Fatalf("%d distinct method label values after 50 requests with made-up methods; want a bounded set (known methods + \"other\")", len(methods))
	}
}
