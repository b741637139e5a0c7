package api

import (
	"net/http"

	"github.com/gorilla/mux"
)

// routes declares every endpoint. Route names double as documentation and
// the path templates label metrics.
func (s *Server) routes() http.Handler {
	// SkipClean: mux would answer "//" or "/../" with a bare 301 (and turn a
	// POST into a GET); such paths get the JSON 404 instead.
	// UseEncodedPath: an encoded slash (%2F) stays part of a segment instead
	// of splitting it, so it cannot reach a route by another path.
	r := mux.NewRouter().SkipClean(true).UseEncodedPath()
	// One fallback tells 404 from 405 itself (see fallback.go).
	r.NotFoundHandler = s.fallback(r)
	r.MethodNotAllowedHandler = r.NotFoundHandler
	r.Use(matchedRoute)

	r.HandleFunc("/healthz", s.healthz).Methods(http.MethodGet).Name("healthz")
	r.HandleFunc("/readyz", s.readyz).Methods(http.MethodGet).Name("readyz")
	r.Handle("/metrics", s.metrics.Handler()).Methods(http.MethodGet).Name("metrics")

	// Needs no key: matched ahead of the /v1 subrouter, before
	// authentication and rate limits.
	r.HandleFunc("/v1/openapi.json", s.openAPI).Methods(http.MethodGet).Name("openapi")
	// The invite's token is the credential here (invites.go).
	r.Handle("/v1/invites/{inviteId}/accept", s.inviteTokenRoute(s.idempotent(s.acceptInvite))).Methods(http.MethodPost).Name("invites_accept")

	v1 := r.PathPrefix("/v1").Subrouter()
	v1.Use(s.authenticate)
	v1.HandleFunc("/projects", s.listProjects).Methods(http.MethodGet).Name("projects_list")
	v1.HandleFunc("/projects", s.idempotent(s.createProject)).Methods(http.MethodPost).Name("projects_create")
	v1.HandleFunc("/projects/{projectId}", s.deleteProject).Methods(http.MethodDelete).Name("projects_delete")
	v1.HandleFunc("/event-types", s.listEventTypes).Methods(http.MethodGet).Name("event_types_list")

	// Everything under a workspace path is visible only to that workspace's keys.
	ws := v1.PathPrefix("/workspaces/{workspaceId}").Subrouter()
	ws.Use(s.requireWorkspace)
	s.workspaceRoutes(ws)
	s.apiKeyRoutes(ws)
	s.webhookRoutes(ws)
	s.portalSessionRoutes(ws)
	if s.portal != nil {
		s.portal.Mount(r, s.admitPortal, s.portalOpenRefused, s.portalOpenFailed)
	}
	return r
}
