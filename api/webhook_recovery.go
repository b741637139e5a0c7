package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/webhookops"
)

// Redelivery and recovery go through Temporal (webhookops); a request's
// id names it in the signal and the logs.

// redeliver is POST .../deliveries/{eventId}/redeliver: one more attempt of
// the event to the subscription now, even after its schedule ended, with the
// same webhook-id. 202 once the event's workflow has the signal; the
// attempt's record follows in the deliveries.
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) {
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct{} // no member yet; an empty body or {} is the request
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	eventID, _ := parseID(mux.Vars(r)["eventId"]) // uuid.Nil, not found, when malformed
	accepted, err := s.ops.Redeliver(r.Context(), principal(r).WorkspaceID, subID, eventID, "api:"+requestIDFrom(r.Context()), redeliveryOnce(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, accepted)
}

// recoverRequest is POST .../recover's body. The times are strings so that
// a malformed one gets this endpoint's message.
type recoverRequest struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
}

// recoverWebhook is POST .../webhooks/{webhookId}/recover: redeliver every
// failed delivery of the subscription whose event was created in the
// window (webhookops.Ops.Recover).
func (s *Server) recoverWebhook(w http.ResponseWriter, r *http.Request) {
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req recoverRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	now := s.now().UTC()
	since, until, err := webhookops.RecoverWindow(req.Since, req.Until, now, s.cfg.DeliveryRetention)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.ops.Recover(r.Context(), principal(r).WorkspaceID, subID, since, until, now, requestIDFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, rec)
}

// getRecovery is GET .../webhooks/{webhookId}/recover: the subscription's
// latest recovery, running or finished, as its workflow's query answers.
func (s *Server) getRecovery(w http.ResponseWriter, r *http.Request) {
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.ops.Recovery(r.Context(), principal(r).WorkspaceID, subID, requestIDFrom(r.Context()))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// redeliveryOnce identifies a redelivery across a client's retries: its
// Idempotency-Key within the key's scope, hashed (the signal and the
// workflow's log keep no key a client chose). A retry runs again only once
// the first request's claim lapsed; the event's workflow then drops the
// repeat. Without the header every request is one more attempt.
func redeliveryOnce(r *http.Request) string {
	key := r.Header.Get(idempotencyHeader)
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(idempotencyScope(r).String() + "\x00" + key))
	return "idem:" + hex.EncodeToString(sum[:16])
}
