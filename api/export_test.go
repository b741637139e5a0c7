package api

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Hooks for the api_test package: the real router has no route that
// panics and (until workspace endpoints exist) none under a workspace path,
// so tests mount their own handlers behind the real middleware.

// ObserveForTest wraps h in the outermost middleware (request id, panic
// recovery, log line, metrics), exactly as New wraps the router.
func (s *Server) ObserveForTest(h http.Handler) http.Handler { return s.observe(h) }

// WorkspaceRouteForTest mounts h at /v1/workspaces/{workspaceId}/probe
// behind the same middleware chain as the real workspace routes: observe,
// authenticate on /v1, then requireWorkspace.
func (s *Server) WorkspaceRouteForTest(h http.Handler) http.Handler {
	r := mux.NewRouter()
	r.Use(matchedRoute)
	v1 := r.PathPrefix("/v1").Subrouter()
	v1.Use(s.authenticate)
	ws := v1.PathPrefix("/workspaces/{workspaceId}").Subrouter()
	ws.Use(s.requireWorkspace)
	ws.Handle("/probe", h)
	return s.observe(r)
}
