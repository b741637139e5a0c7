package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// maxTokenLength bounds what is hashed and looked up; real keys are ~44 characters.
const maxTokenLength = 256

var errBadCredentials = &models.Error{
	Kind: models.ErrUnauthenticated, Code: "invalid_api_key",
	Message: "the API key is invalid, expired or revoked",
}

// authenticate admits requests with a valid bearer API key, judged from the
// key's timestamps now, so an expiry holds whether or not the worker has run.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Several Authorization headers would leave which one counts to
		// whatever picks the first; a request must send exactly one.
		headers := r.Header.Values("Authorization")
		token, ok := "", len(headers) == 1
		if ok {
			token, ok = bearerToken(headers[0])
		}
		if !ok {
			s.metrics.authFail.WithLabelValues("missing").Inc()
			s.writeError(w, r, &models.Error{
				Kind: models.ErrUnauthenticated, Code: "missing_credentials",
				Message: "send an API key as one header: Authorization: Bearer <API_KEY>",
			})
			return
		}
		// An address that has failed too often is refused before the lookup,
		// so guessing keys costs the database nothing (see limits.recentlyValid).
		addr, now := clientAddr(r), s.now()
		if q, refused := s.limits.authRefused(addr, now); refused && (len(token) > maxTokenLength || !s.limits.recentlyValid.has(secret.HashAPIKey(token), now)) {
			s.metrics.authFail.WithLabelValues("throttled").Inc()
			s.writeRateLimited(w, r, q, "too many failed authentications from this address; retry after the Retry-After delay")
			return
		}
		p, err := s.principalFor(r.Context(), token)
		if err != nil {
			if errors.Is(err, models.ErrUnauthenticated) {
				s.metrics.authFail.WithLabelValues("invalid").Inc()
				s.limits.authFailed(addr, now)
			}
			s.writeError(w, r, err)
			return
		}
		s.limits.recentlyValid.add(p.SecretHash, now)
		q, ok := s.limits.budgetFor(r).admit(p, now)
		if q.limit > 0 {
			setQuotaHeaders(w, q)
		}
		if !ok {
			s.writeRateLimited(w, r, q, "too many requests for this API key or workspace; retry after the Retry-After delay")
			return
		}
		s.usage.seen(p, now)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

// principalFor resolves a presented secret to its caller.
func (s *Server) principalFor(ctx context.Context, token string) (models.Principal, error) {
	// Tokens that cannot be keys are refused without a database round trip.
	if len(token) > maxTokenLength || !strings.HasPrefix(token, secret.APIKeyPrefix) {
		return models.Principal{}, errBadCredentials
	}
	hash := secret.HashAPIKey(token)
	cred, err := s.store.CredentialByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return models.Principal{}, errBadCredentials
	}
	if err != nil {
		return models.Principal{}, err
	}
	p, ok := cred.Authenticate(hash, s.now())
	if !ok {
		return models.Principal{}, errBadCredentials
	}
	return p, nil
}

// bearerToken extracts the token of an "Authorization: Bearer <token>" header.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// principal is the authenticated caller; authenticate guarantees it is set.
func principal(r *http.Request) models.Principal {
	p, _ := r.Context().Value(principalKey).(models.Principal)
	return p
}

// requireWorkspace answers 404 for any workspace path but the caller's own,
// so a key learns nothing about other workspaces, not even that they exist.
func (s *Server) requireWorkspace(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := parseID(mux.Vars(r)["workspaceId"])
		if !ok || id != principal(r).WorkspaceID {
			s.writeError(w, r, models.NotFound("workspace"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !principal(r).IsAdmin() {
			s.writeError(w, r, models.Forbidden("only workspace admins can do this"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
