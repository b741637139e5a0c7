package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/models"
)

// webhookRoutes declares the webhook and event endpoints, all for workspace
// admins: a member gets 403 (another workspace is still 404).
func (s *Server) webhookRoutes(ws *mux.Router) {
	admin := func(h http.HandlerFunc) http.Handler { return s.requireAdmin(h) }
	ws.Handle("/webhooks", admin(s.idempotent(s.createWebhook))).Methods(http.MethodPost).Name("webhooks_create")
	ws.Handle("/webhooks", admin(s.listWebhooks)).Methods(http.MethodGet).Name("webhooks_list")
	ws.Handle("/webhooks/{webhookId}", admin(s.getWebhook)).Methods(http.MethodGet).Name("webhooks_get")
	ws.Handle("/webhooks/{webhookId}", admin(s.updateWebhook)).Methods(http.MethodPut).Name("webhooks_update")
	ws.Handle("/webhooks/{webhookId}", admin(s.deleteWebhook)).Methods(http.MethodDelete).Name("webhooks_delete")
	ws.Handle("/webhooks/{webhookId}/deliveries", admin(s.listDeliveries)).Methods(http.MethodGet).Name("webhook_deliveries_list")
	ws.Handle("/webhooks/{webhookId}/deliveries/{eventId}/redeliver", admin(s.idempotentLeased(s.redeliver))).Methods(http.MethodPost).Name("webhook_delivery_redeliver")
	ws.Handle("/webhooks/{webhookId}/recover", admin(s.idempotentLeased(s.recoverWebhook))).Methods(http.MethodPost).Name("webhook_recover")
	ws.Handle("/webhooks/{webhookId}/recover", admin(s.getRecovery)).Methods(http.MethodGet).Name("webhook_recover_get")
	ws.Handle("/webhooks/{webhookId}/public-key", admin(s.getWebhookPublicKey)).Methods(http.MethodGet).Name("webhook_public_key_get")
	ws.Handle("/webhooks/{webhookId}/secret/rotate", admin(s.idempotent(s.rotateWebhookSecret))).Methods(http.MethodPost).Name("webhook_secret_rotate")
	ws.Handle("/webhooks/{webhookId}/test", admin(s.idempotent(s.sendTestEvent))).Methods(http.MethodPost).Name("webhook_test_send")
	ws.Handle("/events", admin(s.idempotent(s.publishEvent))).Methods(http.MethodPost).Name("events_publish")
	ws.Handle("/events", admin(s.listEvents)).Methods(http.MethodGet).Name("events_list")
	ws.Handle("/events/{eventId}", admin(s.getEvent)).Methods(http.MethodGet).Name("events_get")
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) {
	var req createWebhookRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	in, err := req.validate(principal(r), s.cfg.WebhookAllowPrivateNetworks)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	created, err := s.ops.Create(r.Context(), s.storeFor(r), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeSecret(w, http.StatusCreated, created)
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) {
	var v models.Validation
	page := pageParams(query(r, &v), &v)
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.store.Webhooks().List(r.Context(), principal(r).WorkspaceID, page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, err := s.store.Webhooks().Get(r.Context(), principal(r).WorkspaceID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sub)
}

func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req updateWebhookRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	u, err := req.validate(s.cfg.WebhookAllowPrivateNetworks)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, err := s.ops.Update(r.Context(), s.store, principal(r).WorkspaceID, id, u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sub)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err == nil {
		err = s.store.Webhooks().Delete(r.Context(), principal(r).WorkspaceID, id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var v models.Validation
	q := query(r, &v)
	page := pageParams(q, &v)
	filter, pending := deliveryFilter(q, &v)
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if pending {
		s.listPendingDeliveries(w, r, id, filter.EventID, page)
		return
	}
	list, err := s.store.Deliveries().ListFiltered(r.Context(), principal(r).WorkspaceID, id, filter, page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}
