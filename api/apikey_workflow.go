package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// keyWorkflowTimeout bounds the Temporal call a key change makes; a
// healthy server answers in milliseconds.
const keyWorkflowTimeout = 5 * time.Second

// notifyKeyWorkflow tells the key's workflow (ID api-key:<keyId>) that the
// key changed, starting it when the key now has a deadline to wait for.
//
// It never fails the request. The database row is already committed and is
// the truth: authentication and every read derive a key's state from its
// timestamps at the instant of the request. The workflow only moves the
// stored status and erases old hashes, so when Temporal is unreachable
// those lag (until the key's next change starts a workflow again) while
// what callers see stays exact. Hence a warning, not an error.
func (s *Server) notifyKeyWorkflow(r *http.Request, key models.APIKey, reason string) {
	log := s.log.With(
		slog.String("requestId", requestIDFrom(r.Context())),
		slog.String("workspaceId", key.WorkspaceID.String()),
		slog.String("keyId", key.ID.String()),
		slog.String("change", reason))
	if s.temporal == nil {
		log.WarnContext(r.Context(), "api key workflow not notified: no Temporal client")
		return
	}
	// The change is committed: finish telling the workflow even if the
	// client hangs up now.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), keyWorkflowTimeout)
	defer cancel()
	id := workflows.APIKeyWorkflowID(key.ID)
	change := workflows.APIKeyChange{Reason: reason}
	var err error
	if reason == workflows.APIKeyRevoked || (key.ExpiresAt == nil && key.PreviousKeyExpiresAt == nil) {
		// Nothing to wait for: only a workflow already running needs to
		// hear of it (to stop, or to drop a deadline that no longer holds).
		err = s.temporal.SignalWorkflow(ctx, id, "", workflows.APIKeyChangedSignal, change)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			err = nil
		}
	} else {
		_, err = s.temporal.SignalWithStartWorkflow(ctx, id, workflows.APIKeyChangedSignal, change,
			client.StartWorkflowOptions{
				TaskQueue:     s.cfg.TaskQueue,
				Memo:          workflows.APIKeyMemo(key.WorkspaceID, key.ID),
				StaticSummary: "Lifecycle of API key " + key.ID.String() + " (workspace " + key.WorkspaceID.String() + ")",
			},
			workflows.APIKey, &workflows.APIKeyInput{WorkspaceID: key.WorkspaceID, KeyID: key.ID})
	}
	if err != nil {
		log.WarnContext(ctx, "api key workflow not notified; its stored status may lag until the key changes again",
			slog.Any("error", err))
	}
}
