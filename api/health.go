package api

import (
	"context"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/migrations"
)

// healthz says the process is alive; it checks nothing else on purpose.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether the API can serve: PostgreSQL answers with the schema
// applied. Temporal's state is reported in the body but does not decide:
// everything the API does works without it (a published event waits in the
// outbox, a key change in its lifecycle outbox), so a Temporal outage must
// not make a load balancer drain every API replica.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "temporal": "ok"}
	ready := true
	if err := s.store.Ping(ctx); err != nil {
		checks["postgres"], ready = "unreachable", false
	} else if pending, err := migrations.Pending(ctx, s.store.DB()); err != nil || len(pending) > 0 {
		checks["postgres"], ready = "schema not migrated (run: admin migrate)", false
	}
	if s.temporal == nil {
		checks["temporal"] = "not configured (events wait in the outbox)"
	} else if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		checks["temporal"] = "unreachable (events wait in the outbox)"
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"ready": ready, "checks": checks})
}
