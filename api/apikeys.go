package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/telemetry"
	"github.com/openlayer-ai/workspace-service/models"
)

// apiKeyRoutes declares the API key endpoints. A member manages its own
// keys, an admin every key; a key the caller may not manage reads as not
// found. Managing takes a current secret: a rotation's previous secret may be
// the leaked one, and must not mint a key or take the rotated one over.
func (s *Server) apiKeyRoutes(ws *mux.Router) {
	manage := func(h http.HandlerFunc) http.Handler { return s.requireCurrentSecret(h) }
	ws.Handle("/api-keys", manage(s.idempotent(s.createAPIKey))).Methods(http.MethodPost).Name("api_keys_create")
	ws.HandleFunc("/api-keys", s.listAPIKeys).Methods(http.MethodGet).Name("api_keys_list")
	ws.HandleFunc("/api-keys/{apiKeyId}", s.getAPIKey).Methods(http.MethodGet).Name("api_keys_get")
	ws.Handle("/api-keys/{apiKeyId}", manage(s.updateAPIKey)).Methods(http.MethodPut).Name("api_keys_update")
	ws.Handle("/api-keys/{apiKeyId}", manage(s.revokeAPIKey)).Methods(http.MethodDelete).Name("api_keys_revoke")
	ws.Handle("/api-keys/{apiKeyId}/rotate", manage(s.idempotent(s.rotateAPIKey))).Methods(http.MethodPost).Name("api_keys_rotate")
}

// requireCurrentSecret refuses callers presenting a previous secret.
func (s *Server) requireCurrentSecret(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if principal(r).PreviousSecret {
			s.writeError(w, r, models.ErrPreviousSecret)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withSecret shapes the response that issues a secret: secureKey holds the
// full secret there (the spec keeps it for backward compatibility).
func withSecret(k models.APIKey) models.APIKey {
	k.SecureKey = k.Secret
	return k
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) {
	var req createAPIKeyRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	p, now := principal(r), s.now()
	in, err := req.validate(p, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	in.Cap = s.cfg.MaxAPIKeysPerWorkspace
	key, err := s.storeFor(r).APIKeys().Create(r.Context(), in)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() {
		s.metrics.keyEvent(telemetry.KeyCreated)
		if key.ExpiresAt != nil {
			s.outbox.Poke(store.OutboxAPIKeys)
		}
	})
	writeSecret(w, http.StatusCreated, withSecret(key).WithStatusAt(now))
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) {
	keys, err := s.store.APIKeys().List(r.Context(), principal(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now := s.now()
	for i := range keys {
		keys[i] = keys[i].WithStatusAt(now)
	}
	writeJSON(w, http.StatusOK, keys)
}

func (s *Server) getAPIKey(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "apiKeyId", "API key")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	key, err := s.store.APIKeys().Get(r.Context(), principal(r), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, key.WithStatusAt(s.now()))
}

func (s *Server) updateAPIKey(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "apiKeyId", "API key")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req updateAPIKeyRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	rename, name, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, now := principal(r), s.now()
	var key models.APIKey
	if rename {
		key, err = s.store.APIKeys().Rename(r.Context(), p, id, name, now)
	} else {
		// Nothing to change: answer with the key under Rename's visibility
		// rules, leaving dateUpdated alone.
		key, err = s.store.APIKeys().Get(r.Context(), p, id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, key.WithStatusAt(now))
}

func (s *Server) rotateAPIKey(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "apiKeyId", "API key")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req rotateAPIKeyRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	p, now := principal(r), s.now()
	rot, err := req.validate(p, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	key, err := s.storeFor(r).APIKeys().Rotate(r.Context(), p, id, rot)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	onCommit(r, func() {
		s.metrics.keyEvent(telemetry.KeyRotated)
		s.outbox.Poke(store.OutboxAPIKeys)
	})
	writeSecret(w, http.StatusOK, withSecret(key).WithStatusAt(now))
}

// revokeAPIKey deletes a key. A key may revoke itself: this request is
// answered, and the next one with that key refused.
func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "apiKeyId", "API key")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := principal(r)
	if err := s.store.APIKeys().Revoke(r.Context(), p, id, s.now()); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.metrics.keyEvent(telemetry.KeyRevoked)
	s.outbox.Poke(store.OutboxAPIKeys)
	w.WriteHeader(http.StatusNoContent)
}
