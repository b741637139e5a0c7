package api

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of every route the router
// serves, embedded so the binary always serves the document of its own
// code. openapi_routes_internal_test.go fails when the router and the
// document disagree on a path or method; openapi_validation_test.go checks
// real requests and responses against it.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves the document. It needs no API key, so it is registered
// outside the authenticated /v1 subrouter and spends no rate-limit token.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPIDocument)
}
