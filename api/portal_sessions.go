package api

import (
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// portalSessionRoutes declares the endpoints that mint and end links to the
// consumer portal (package portal), for workspace admins only.
func (s *Server) portalSessionRoutes(ws *mux.Router) {
	admin := func(h http.HandlerFunc) http.Handler { return s.requireAdmin(h) }
	// No Idempotency-Key: a replayed response would have to store the link's
	// token in clear, and a retry that mints a second link costs nothing.
	// A link is a credential: like a key or an invite, it takes a current
	// secret (a rotation's previous one may be the leaked one).
	ws.Handle("/portal-sessions", admin(s.requireCurrentSecret(http.HandlerFunc(s.createPortalSession)).ServeHTTP)).Methods(http.MethodPost).Name("portal_sessions_create")
	ws.Handle("/portal-sessions", admin(s.listPortalSessions)).Methods(http.MethodGet).Name("portal_sessions_list")
	ws.Handle("/portal-sessions/{portalSessionId}", admin(s.deletePortalSession)).Methods(http.MethodDelete).Name("portal_sessions_delete")
}

// PortalOpenPath is where a portal link points; package portal serves it.
const PortalOpenPath = "/portal/open"

type createPortalSessionRequest struct {
	ExpiresInSeconds *float64 `json:"expiresInSeconds"`
	ReadOnly         *bool    `json:"readOnly"`
	ApplicationName  *string  `json:"applicationName"`
	LogoURL          *string  `json:"logoUrl"`
}

func (req createPortalSessionRequest) validate() (ttl time.Duration, readOnly bool, err error) {
	var v models.Validation
	if n := req.ApplicationName; n != nil {
		if c := utf8.RuneCountInString(*n); c < 1 || c > models.PortalApplicationNameMax || strings.TrimSpace(*n) != *n ||
			!utf8.ValidString(*n) || strings.IndexFunc(*n, hidesText) >= 0 {
			v.Add("applicationName", "must be 1 to "+strconv.Itoa(models.PortalApplicationNameMax)+
				" characters, without control or format characters (such as a right-to-left override) or surrounding spaces")
		}
	}
	if u := req.LogoURL; u != nil && !validLogoURL(*u) {
		v.Add("logoUrl", "must be an absolute https URL of at most "+strconv.Itoa(models.PortalLogoURLMax)+
			" characters, without credentials, fragment, spaces, quotes, commas or semicolons")
	}
	ttl = models.PortalSessionTTLDefault
	if x := req.ExpiresInSeconds; x != nil {
		lo, hi := models.PortalSessionTTLMin.Seconds(), models.PortalSessionTTLMax.Seconds()
		if *x < lo || *x > hi || *x != math.Trunc(*x) {
			v.Add("expiresInSeconds", "must be a whole number of seconds from "+strconv.Itoa(int(lo))+" to "+strconv.Itoa(int(hi)))
		} else {
			ttl = time.Duration(*x) * time.Second
		}
	}
	if req.ReadOnly != nil {
		readOnly = *req.ReadOnly
	}
	return ttl, readOnly, v.Err()
}

// validLogoURL admits an https URL that can stand as it is in the pages'
// img src and in their Content-Security-Policy's img-src (which a quote,
// space, comma or semicolon would break out of).
func validLogoURL(s string) bool {
	if len(s) > models.PortalLogoURLMax || strings.ContainsAny(s, " \t\r\n\"'`,;<>\\#") {
		return false
	}
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.User == nil && u.Fragment == "" && u.Opaque == "" &&
		logoHost(u.Hostname()) && validPort(u.Port())
}

// hidesText is a control or format character (a zero-width space, a
// right-to-left override), which would hide or reorder the text around a
// name the pages show; unlike invites' invisible, spaces are fine here.
func hidesText(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// dnsName is a host name of letters, digits and hyphens in dot-separated
// labels: no wildcard, which in the pages' img-src would admit any host.
var dnsName = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// logoHost admits an IP address or a DNS name.
func logoHost(h string) bool {
	return net.ParseIP(h) != nil || (len(h) <= 253 && dnsName.MatchString(h))
}

// validPort admits no port or one from 1 to 65535 without a leading zero.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}

// createPortalSession mints a single-use link to the portal of the caller's
// workspace. Only the token's hash is stored; the link is shown once.
func (s *Server) createPortalSession(w http.ResponseWriter, r *http.Request) {
	var req createPortalSessionRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	ttl, readOnly, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	token, hash, err := secret.NewPortalSecret(secret.PortalTokenPrefix)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, now := principal(r), s.now()
	expires := now.Add(ttl)
	if p.KeyExpiresAt != nil && p.KeyExpiresAt.Before(expires) {
		expires = *p.KeyExpiresAt // the session ends with the key anyway
	}
	sess, _, err := s.store.PortalSessions().Create(r.Context(), models.NewPortalSession{
		ID: uuid.New(), WorkspaceID: p.WorkspaceID, CreatedBy: p.UserID,
		APIKeyID: p.KeyID, APIKeySecretHash: p.SecretHash, TokenHash: hash, ReadOnly: readOnly, ExpiresAt: expires,
		ApplicationName: req.ApplicationName, LogoURL: req.LogoURL,
	}, now, s.cfg.PortalMaxSessions)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	link := s.portalBase(r) + PortalOpenPath + "?" + url.Values{"token": {token}}.Encode()
	writeSecret(w, http.StatusCreated, models.PortalSessionCreated{ID: sess.ID, URL: link, ExpiresAt: sess.ExpiresAt})
}

func (s *Server) listPortalSessions(w http.ResponseWriter, r *http.Request) {
	var v models.Validation
	page := pageParams(query(r, &v), &v)
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.store.PortalSessions().List(r.Context(), principal(r).WorkspaceID, s.now(), page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// deletePortalSession ends a session at once: its link and its cookie stop
// working on the next request.
func (s *Server) deletePortalSession(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "portalSessionId", "portal session")
	if err == nil {
		err = s.store.PortalSessions().Delete(r.Context(), principal(r).WorkspaceID, id)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// portalBase is PORTAL_PUBLIC_URL when set. Else it is the scheme and host
// the admin reached the API by, where the same process serves the portal:
// https, except plain HTTP on loopback (make dev and tests); a proxy that
// passes any Host on lets a client choose it, hence the setting.
func (s *Server) portalBase(r *http.Request) string {
	if s.cfg.PortalPublicURL != "" {
		return s.cfg.PortalPublicURL
	}
	scheme := "https"
	if r.TLS == nil && netguard.LoopbackHost(r.Host) {
		scheme = "http"
	}
	return scheme + "://" + r.Host
}
