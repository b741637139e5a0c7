package api

import (
	"encoding/json"
	"net/http"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// webhookTestMessage is the data's message of every test event.
const webhookTestMessage = "This is a test event: your endpoint received and can verify webhooks from this workspace."

// sendTestEvent stores a webhook.test event for the one subscription and
// answers 202, as publishing does: the event is delivered, retried and
// recorded like any other (its records are in the subscription's
// deliveries), whatever event types the subscription takes, so a customer
// can check an endpoint before subscribing it to real events. A disabled
// subscription is refused (409 webhook_disabled): nothing would be sent.
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
	ev, err := s.store.Events().CreateTest(r.Context(), principal(r).WorkspaceID, id, data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.outbox != nil {
		s.outbox.Poke(store.OutboxEvents)
	}
	writeJSON(w, http.StatusAccepted, models.WebhookTestAccepted{EventID: ev.ID})
}
