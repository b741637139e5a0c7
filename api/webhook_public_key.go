package api

import "net/http"

// getWebhookPublicKey shows a v1a subscription's whpk_ public key, and the
// previous one while a rotation's grace period lasts; a v1 subscription is
// 409 signature_scheme_v1 (store.Webhooks.PublicKey).
func (s *Server) getWebhookPublicKey(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pk, err := s.store.Webhooks().PublicKey(r.Context(), principal(r).WorkspaceID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, pk)
}
