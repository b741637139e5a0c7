package api

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

// openAPIDocument is the OpenAPI 3.1 description of every route, embedded
// so the binary serves the document of its own code; tests check that the
// router and real responses agree with it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIETag names this build's document, so clients and caches revalidate
// it (If-None-Match → 304) instead of fetching its ~110 KB again.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}()

// openAPI serves the document without an API key (see routes);
// http.ServeContent answers If-None-Match and Range from the ETag.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ETag", openAPIETag)
	h.Set("Cache-Control", "public, max-age=300")
	http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(openAPIDocument))
}
