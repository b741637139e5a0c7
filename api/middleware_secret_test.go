package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A client-chosen request id is echoed into headers and every log line of
// the request: one that looks like a credential is replaced, so a secret
// sent there (by mistake or on purpose) never reaches the logs.
func TestRequestIDNeverCarriesASecret(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{h.admin.Secret, "whsec_C8mPehASiYfPKzTc8SyL27HqP7DnQmnavt8pN1fXpB0"} {
		rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil, "X-Request-Id", id)
		if got := rec.Header().Get("X-Request-Id"); got == id || strings.HasPrefix(got, "olk_") || strings.HasPrefix(got, "whsec_") {
			t.Errorf("request id %q echoed as %q", id[:6], got)
		}
	}
	if rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil, "X-Request-Id", "trace-42"); rec.Header().Get("X-Request-Id") != "trace-42" {
		t.Errorf("a plain request id was not kept: %q", rec.Header().Get("X-Request-Id"))
	}
}
