package api

import (
	"encoding/json"
	"net/http"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

const webhookTestMessage = "This is a test event: your endpoint received and can verify webhooks from this workspace."

// sendTestEvent stores a webhook.test event for the one subscription and
// answers 202. It is delivered and recorded like any other event, whatever
// types the subscription takes, so an endpoint can be checked before real
// events flow; a disabled subscription is refused.
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
	data, err := json.Marshal(map[string]string{"subscriptionId": id.String(), "message": webhookTestMessage})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, err := s.storeFor(r).Events().CreateTest(r.Context(), principal(r).WorkspaceID, id, data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() { s.outbox.Poke(store.OutboxEvents) })
	writeJSON(w, http.StatusAccepted, models.WebhookTestAccepted{EventID: ev.ID})
}
