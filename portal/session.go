package portal

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// cookieName holds the session's secret; the cookie is scoped to /portal/.
const cookieName = "portal_session"

// maxSecretLength bounds what is hashed and looked up; real ones are ~45 characters.
const maxSecretLength = 128

type ctxKey int

const sessionKey ctxKey = 0

// session is the request's portal session and its form token.
type session struct {
	models.PortalSession
	CSRF string
}

func sessionOf(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey).(*session)
	return s
}

// secureCookies reports whether the cookie must be Secure: as
// PORTAL_PUBLIC_URL's scheme says when it is set, else everywhere but plain
// HTTP on loopback (make dev, tests), where a browser would drop it.
func (p *Portal) secureCookies(r *http.Request) bool {
	if u := p.publicURL; u != nil {
		return u.Scheme == "https"
	}
	return r.TLS != nil || !netguard.LoopbackHost(r.Host)
}

func (p *Portal) refuseLink(w http.ResponseWriter, r *http.Request) {
	p.pages.render(w, r, http.StatusGone, "message", view{Title: "This link cannot be used",
		Message: "A portal link works once and for a limited time: this one has been used, has expired or was ended. Ask the people who sent it for a new link."})
}

// authenticate admits requests with a live session's cookie, read from the
// database on every request, so ending a session takes effect at once and
// every page is scoped to the session's own workspace.
func (p *Portal) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(cookieName)
		if err != nil || len(c.Value) > maxSecretLength {
			p.signedOut(w, r)
			return
		}
		ps, err := p.store.PortalSessions().ByCookie(r.Context(), secret.HashAPIKey(c.Value), p.now())
		if errors.Is(err, models.ErrNotFound) && r.Method == http.MethodPost && r.URL.Path == "/portal/logout" {
			p.clearCookie(w, r) // "End session" sent twice: it has ended
			redirect(w, endedPath)
			return
		}
		if errors.Is(err, models.ErrNotFound) {
			p.signedOut(w, r)
			return
		}
		if err != nil {
			p.fail(w, r, err)
			return
		}
		if wait, ok := p.admit(r, ps.ID, ps.WorkspaceID); !ok {
			p.tooMany(w, r, wait, "This session or workspace has made too many requests. Wait a few seconds, then try again.")
			return
		}
		s := &session{PortalSession: ps, CSRF: secret.PortalCSRFToken(c.Value)}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey, s)))
	})
}

// tooMany answers 429 with Retry-After in whole seconds, rounded up.
func (p *Portal) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.FormatInt(int64((max(time.Second, wait)+time.Second-1)/time.Second), 10))
	if sessionOf(r) == nil { // a link refused: there is nowhere to go back to
		p.pages.render(w, r, http.StatusTooManyRequests, "message", view{Title: "Too many requests", Message: msg})
		return
	}
	p.message(w, r, http.StatusTooManyRequests, "Too many requests", msg)
}

func (p *Portal) signedOut(w http.ResponseWriter, r *http.Request) {
	p.clearCookie(w, r)
	p.pages.render(w, r, http.StatusUnauthorized, "message", view{Title: "No portal session",
		Message: "Your portal session has ended or expired, or this browser never opened a portal link. Ask for a new link."})
}

func (p *Portal) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: "/portal/", MaxAge: -1,
		HttpOnly: true, Secure: p.secureCookies(r), SameSite: http.SameSiteStrictMode})
}

// change guards a state-changing form: a valid CSRF token (beyond
// SameSite, which older browsers and same-site subdomains do not honour)
// and a session that is not read-only.
func (p *Portal) change(h http.HandlerFunc) http.Handler {
	return p.changeAlways(p.writable(h).ServeHTTP)
}

// writable refuses a read-only session: the guard of every change, and of
// the pages that only hold a form for one (add, edit, confirm a delete),
// so a read-only session is offered no form.
func (p *Portal) writable(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sessionOf(r).ReadOnly {
			p.message(w, r, http.StatusForbidden, "Read-only session",
				"This portal session is read-only: it can look but not change anything.")
			return
		}
		h(w, r)
	})
}

// changeAlways checks the CSRF token of a form even a read-only session may
// send (ending the session), and that a browser's Origin, when sent, is ours.
func (p *Portal) changeAlways(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := r.ParseForm()
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			p.message(w, r, http.StatusRequestEntityTooLarge, "Form too large",
				fmt.Sprintf("The form is larger than the portal takes (%d bytes). Shorten what you entered and try again.", tooLarge.Limit))
			return
		}
		if err != nil || !p.sameOrigin(r) ||
			!secret.ValidPortalCSRFToken(sessionCookie(r), r.PostForm.Get("csrf")) {
			p.message(w, r, http.StatusForbidden, "Form refused",
				"The form did not come from this portal session (its security token is missing or stale). Go back, reload the page and try again.")
			return
		}
		h(w, r)
	})
}

// sameOrigin reports whether a browser's Origin, when sent, is the
// portal's own: PORTAL_PUBLIC_URL's scheme and host when it is set, else
// the request's host, https except plain http on loopback (as the links
// and the cookie's Secure attribute are).
func (p *Portal) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme, host := "http", r.Host
	if p.secureCookies(r) {
		scheme = "https"
	}
	if pu := p.publicURL; pu != nil {
		host = pu.Host
	}
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == scheme && strings.EqualFold(u.Host, host) &&
		u.User == nil && u.Path == "" && u.RawQuery == "" && u.Fragment == ""
}

func sessionCookie(r *http.Request) string {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

// endedPath is where ending a session leads: a page outside the session,
// so it offers no navigation, and reloading it ends nothing.
const endedPath = "/portal/ended"

// logout ends the session for good, like DELETE .../portal-sessions/{id}.
func (p *Portal) logout(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if err := p.store.PortalSessions().Delete(r.Context(), s.WorkspaceID, s.ID); err != nil && !errors.Is(err, models.ErrNotFound) {
		p.fail(w, r, err)
		return
	}
	p.clearCookie(w, r)
	redirect(w, endedPath)
}

func (p *Portal) ended(w http.ResponseWriter, r *http.Request) {
	p.pages.render(w, r, http.StatusOK, "message", view{Title: "Session ended",
		Message: "Your portal session has ended. Ask for a new link to come back."})
}

// contentSecurityPolicy is every page's policy; logo, when not "", is the
// one image a session's host application asked its pages to show.
func contentSecurityPolicy(logo string) string {
	img := "img-src 'self'"
	if logo != "" {
		img += " " + logo
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; " + img + "; " +
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

// securityHeaders: scripts, styles and images from the portal only and
// no inline script; no framing; no referrer to other sites (the open
// page's address holds the token; same-origin keeps the Origin header
// that no-referrer would turn to "null" on a form); nothing cached, since
// pages show secrets once.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy(""))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
