package api_test

import (
	"net/http"
	"testing"
)

// The document carries an ETag and a Cache-Control, and a client that
// already holds it gets 304 with no body instead of the whole document.
func TestOpenAPIDocumentRevalidates(t *testing.T) {
	h := newHarness(t)
	first := h.do(http.MethodGet, "/v1/openapi.json", "", nil)
	etag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || etag == "" || first.Header().Get("Cache-Control") == "" {
		t.Fatalf("first fetch: %d, ETag %q, Cache-Control %q", first.Code, etag, first.Header().Get("Cache-Control"))
	}
	again := h.do(http.MethodGet, "/v1/openapi.json", "", nil, "If-None-Match", etag)
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("revalidation: %d with %d bytes, want 304 and none", again.Code, again.Body.Len())
	}
	stale := h.do(http.MethodGet, "/v1/openapi.json", "", nil, "If-None-Match", `"stale"`)
	if stale.Code != http.StatusOK || stale.Body.Len() != first.Body.Len() {
		t.Fatalf("stale ETag: %d with %d bytes, want the document", stale.Code, stale.Body.Len())
	}
}
