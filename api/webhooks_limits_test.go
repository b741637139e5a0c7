package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// Every bad eventTypes entry adds a detail naming the whole catalogue, so
// a body under the 1 MiB cap, ["x","x",...], once made a response of tens
// of MiB. The array is bounded by the catalogue's size and an error lists
// at most 20 details, so the answer stays small.
func TestEventTypesErrorAmplification(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	n := (1<<20 - 64) / 4
	body := `{"url":"https://example.com","eventTypes":[` + strings.TrimSuffix(strings.Repeat(`"x",`, n), ",") + `]}`
	rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d", rec.Code)
	}
	if got := rec.Body.Len(); got > 64<<10 {
		t.Fatalf("a %d-byte request produced a %d-byte error response (%.0fx)", len(body), got, float64(got)/float64(len(body)))
	}
}
