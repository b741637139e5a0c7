package api

import (
	"net/http"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// sendTestEvent stores a webhook.test event for the one subscription and
// answers 202 (webhookops.Ops.SendTest).
func (s *Server) sendTestEvent(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// No member is defined yet; an empty body or {} is the request.
	var req struct{}
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	accepted, err := s.ops.SendTest(r.Context(), s.storeFor(r), principal(r).WorkspaceID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() { s.outbox.Poke(store.OutboxEvents) })
	writeJSON(w, http.StatusAccepted, accepted)
}
