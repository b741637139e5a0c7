package api

import (
	"net/http"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// rotateWebhookSecretRequest is the optional body of a secret rotation:
// a grace period in whole hours or whole seconds, not both.
type rotateWebhookSecretRequest struct {
	GracePeriodHours   *float64 `json:"gracePeriodHours"`
	GracePeriodSeconds *float64 `json:"gracePeriodSeconds"`
}

// rotateWebhookSecret gives the subscription a new signing secret, shown
// only in this response (webhookops.Ops.RotateSecret).
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req rotateWebhookSecretRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	grace, err := webhookops.GracePeriod(req.GracePeriodHours, req.GracePeriodSeconds)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rotated, err := s.ops.RotateSecret(r.Context(), s.storeFor(r), principal(r).WorkspaceID, id, grace)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() { s.outbox.Poke(store.OutboxWebhookSecrets) })
	writeSecret(w, http.StatusOK, rotated)
}
