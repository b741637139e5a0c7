package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/keysync"
)

// keyWorkflowTimeout bounds the Temporal call a key change makes; a
// healthy server answers in milliseconds.
const keyWorkflowTimeout = 5 * time.Second

// notifyKeyWorkflow tells the key's workflow (ID api-key:<keyId>) that the
// key changed, starting it when the key now has a deadline to wait for,
// and marks the change delivered (see keysync).
//
// It never fails the request. The database row is already committed and is
// the truth: authentication and every read derive a key's state from its
// timestamps at the instant of the request. The change was recorded as
// pending in the same transaction, so when Temporal is unreachable the
// worker's reconciler notifies the workflow later; meanwhile only the
// stored status and the erasure of old hashes lag. Hence a warning, not an
// error.
func (s *Server) notifyKeyWorkflow(r *http.Request, workspaceID, keyID uuid.UUID) {
	log := s.log.With(
		slog.String("requestId", requestIDFrom(r.Context())),
		slog.String("workspaceId", workspaceID.String()),
		slog.String("keyId", keyID.String()))
	if s.temporal == nil {
		log.WarnContext(r.Context(), "api key workflow not notified: no Temporal client; the worker will notify it")
		return
	}
	// The change is committed: finish telling the workflow even if the
	// client hangs up now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), keyWorkflowTimeout)
	defer cancel()
	n := keysync.Notifier{Temporal: s.temporal, Store: s.store, TaskQueue: s.cfg.TaskQueue, Log: log}
	if err := n.Notify(ctx, keyID); err != nil {
		log.WarnContext(ctx, "api key workflow not notified; the worker will notify it within seconds of Temporal answering",
			slog.Any("error", err))
	}
}
