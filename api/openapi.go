package api

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

// openAPIDocument is the OpenAPI 3.1 description of every route the router
// serves, embedded so the binary always serves the document of its own
// code. openapi_routes_internal_test.go fails when the router and the
// document disagree on a path or method; openapi_validation_test.go checks
// real requests and responses against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIETag names this build's document, so clients and caches revalidate
// it (If-None-Match → 304) instead of fetching its ~110 KB again.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}()

// openAPI serves the document. It needs no API key, so it is registered
// outside the authenticated /v1 subrouter and spends no rate-limit token.
// http.ServeContent answers If-None-Match and Range from the ETag.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ETag", openAPIETag)
	h.Set("Cache-Control", "public, max-age=300")
	http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(openAPIDocument))
}
