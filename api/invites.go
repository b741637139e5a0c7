package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func (s *Server) createInvites(w http.ResponseWriter, r *http.Request) {
	var req createInvitesRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	emails, role, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(emails) == 0 {
		writeJSON(w, http.StatusOK, inviteList{Items: []models.Invite{}})
		return
	}
	p, now := principal(r), s.now()
	invites, err := s.storeFor(r).Invites().Create(r.Context(), models.NewInvites{
		WorkspaceID: p.WorkspaceID, CreatorID: p.UserID, Emails: emails, Role: role,
		Now: now, ExpiresAt: now.Add(s.cfg.InviteTTL),
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The tokens are shown here only.
	writeSecret(w, http.StatusCreated, inviteList{Items: invites})
}

// inviteList is the create response: the SDKs read items only.
type inviteList struct {
	Items []models.Invite `json:"items"`
}

func (s *Server) listInvites(w http.ResponseWriter, r *http.Request) {
	var v models.Validation
	page := pageParams(query(r, &v), &v)
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.store.Invites().List(r.Context(), principal(r).WorkspaceID, page, s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) revokeInvite(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "inviteId", "invite")
	if err == nil {
		err = s.store.Invites().Revoke(r.Context(), principal(r).WorkspaceID, id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inviteTokenRoute guards POST /v1/invites/{inviteId}/accept, which takes
// no API key: the token is the credential, so a wrong one counts against
// the address's failed-authentication budget (RATE_LIMIT_AUTH_FAILURES),
// and an address past it is refused before any lookup. The invite scopes
// the request's Idempotency-Key.
func (s *Server) inviteTokenRoute(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, now := clientAddr(r), s.now()
		if q, refused := s.limits.authRefused(addr, now); refused {
			s.writeRateLimited(w, r, q, "too many failed attempts from this address; retry after the Retry-After delay")
			return
		}
		id, err := pathID(r, "inviteId", "invite")
		if err != nil {
			s.limits.authFailed(addr, now)
			s.writeError(w, r, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), inviteScopeKey, id)))
	})
}

// acceptInvite makes the token's holder a member and answers with their
// first API key, shown once, as the operator's admin add-member does.
func (s *Server) acceptInvite(w http.ResponseWriter, r *http.Request) {
	var req acceptInviteRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	token, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, _ := r.Context().Value(inviteScopeKey).(uuid.UUID) // set by inviteTokenRoute
	creds, err := s.storeFor(r).Invites().Accept(r.Context(), models.InviteAcceptance{
		InviteID: id, Token: token, Now: s.now(), KeyCap: s.cfg.MaxAPIKeysPerWorkspace,
	})
	if errors.Is(err, models.ErrNotFound) {
		s.limits.authFailed(clientAddr(r), s.now())
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeSecret(w, http.StatusCreated, creds)
}
