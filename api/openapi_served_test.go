package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// GET /v1/openapi.json serves api/openapi.json as it is in the repository:
// without credentials, without spending or reporting rate-limit tokens (a
// tiny read budget is never exhausted by it), and labelled in the metrics
// by its route template.
func TestOpenAPIDocumentIsServed(t *testing.T) {
	h := newHarness(t, limited(1))
	want, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 { // past the read burst of 3
		rec := h.do(http.MethodGet, "/v1/openapi.json", "", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		if rec.Body.String() != string(want) {
			t.Fatal("the served document is not api/openapi.json")
		}
		if v := rec.Header().Get("RateLimit-Limit"); v != "" {
			t.Errorf("RateLimit-Limit %q: the document is not rate limited", v)
		}
	}
	// A key, even a bad one, changes nothing: authentication never runs.
	if rec := h.do(http.MethodGet, "/v1/openapi.json", "olk_not-a-key", nil); rec.Code != http.StatusOK {
		t.Errorf("with a bad key: %d %s", rec.Code, rec.Body)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(want, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q (%v), want 3.1.0", doc.OpenAPI, err)
	}
	// Other methods are 405 in the error shape, like any known path.
	rec := h.do(http.MethodPost, "/v1/openapi.json", "", nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Errorf("POST: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
	checkError(t, rec, "method_not_allowed", "")

	metrics := h.do(http.MethodGet, "/metrics", "", nil).Body.String()
	if !strings.Contains(metrics, `api_http_requests_total{code="200",method="GET",route="/v1/openapi.json"} 11`) {
		t.Errorf("no api_http_requests_total series for route /v1/openapi.json with 11 requests:\n%s", grepLines(metrics, "openapi"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
