package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/migrations"
)

// healthz says the process is alive; it checks nothing else on purpose.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz says whether PostgreSQL answers with the schema applied. Temporal's
// state is reported but does not decide: the API works without it (changes
// wait in the outbox), and an outage must not drain every API replica.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	// Each check has its own deadline, run side by side: a database that
	// hangs must not make Temporal read as unreachable too.
	checks := map[string]string{"postgres": "ok", "temporal": "ok"}
	ready := true
	var wg sync.WaitGroup
	wg.Go(func() {
		if s.temporal == nil {
			checks["temporal"] = "not configured (events wait in the outbox)"
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if _, err := s.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			checks["temporal"] = "unreachable (events wait in the outbox)"
		}
	})
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	postgres := "ok"
	if err := s.store.Ping(ctx); err != nil {
		postgres, ready = "unreachable", false
	} else if pending, err := migrations.Pending(ctx, s.store.DB()); err != nil || len(pending) > 0 {
		postgres, ready = "schema not migrated (run: admin migrate)", false
	}
	wg.Wait()
	checks["postgres"] = postgres
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"ready": ready, "checks": checks})
}
