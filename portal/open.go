package portal

import (
	"errors"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// openData is the page a link opens on: whose portal it is, the token for
// its form, and the session this browser already has in another workspace.
type openData struct {
	Token   string
	Current *models.PortalSession
}

// showOpen is the page a link opens on. It spends nothing: a chat's or a
// mail's link previewer fetches the link with a GET before the person
// clicks, and must not use it up. It shows whose portal the link opens and
// a "Continue" button that POSTs the token; when this browser's session
// belongs to another workspace, it asks before replacing it.
func (p *Portal) showOpen(w http.ResponseWriter, r *http.Request) {
	token, ok := p.linkToken(w, r, r.URL.Query().Get("token"))
	if !ok {
		return
	}
	target, err := p.store.PortalSessions().Peek(r.Context(), secret.HashAPIKey(token), p.now())
	if !p.linkFound(w, r, err) {
		return
	}
	cur, err := p.currentSession(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.askToOpen(w, r, token, target, cur)
}

// askToOpen renders the page of a link to target: "Continue", or, when
// this browser's session cur belongs to another workspace, the question
// whether to replace it, whose answer names that session.
func (p *Portal) askToOpen(w http.ResponseWriter, r *http.Request, token string, target models.PortalSession, cur *models.PortalSession) {
	d := openData{Token: token}
	title := "Open the webhook portal"
	if cur != nil && cur.WorkspaceID != target.WorkspaceID {
		d.Current = cur
		title = "You are signed in to " + cur.WorkspaceName
	}
	// The address may hold the token: a Referer carries the origin only.
	// Not no-referrer, under which a browser sends the button's POST with
	// "Origin: null", which sameOrigin must refuse.
	w.Header().Set("Referrer-Policy", "strict-origin")
	p.pages.render(w, r, http.StatusOK, "open", view{Title: title, Brand: brandOf(&target), Data: d})
}

// open trades a link's single-use token, POSTed by the page showOpen
// answers, for a session cookie, once the person has agreed to end this
// browser's session in another workspace, if it has one. The token is spent by the same statement
// that binds the cookie, so a second use of the link, even a concurrent
// one, is refused. A session this browser had before ends: its cookie is
// replaced.
//
// It answers a page that moves on to the portal by itself rather than a
// redirect, as a SameSite=Strict cookie set during a navigation that began
// on another site (the link in a mail) is withheld on that navigation's
// redirects; a navigation the page starts is same-site.
func (p *Portal) open(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !p.sameOrigin(r) {
		p.pages.render(w, r, http.StatusForbidden, "message", view{Title: "Form refused",
			Message: "The form did not come from this portal. Open the link you were given again."})
		return
	}
	token, ok := p.linkToken(w, r, r.PostForm.Get("token"))
	if !ok {
		return
	}
	cookieSecret, cookieHash, err := secret.NewPortalSecret(secret.PortalCookiePrefix)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	previous, err := p.currentSession(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	// A click on a link in another site withholds the SameSite=Strict
	// cookie from the GET, so the question may first be possible here.
	if previous != nil && r.PostForm.Get("replace") != previous.ID.String() {
		target, err := p.store.PortalSessions().Peek(r.Context(), secret.HashAPIKey(token), p.now())
		if !p.linkFound(w, r, err) {
			return
		}
		if target.WorkspaceID != previous.WorkspaceID {
			p.askToOpen(w, r, token, target, previous)
			return
		}
	}
	sess, err := p.store.PortalSessions().Open(r.Context(), secret.HashAPIKey(token), cookieHash, p.now())
	if !p.linkFound(w, r, err) {
		return
	}
	if previous != nil && previous.ID != sess.ID {
		if err := p.store.PortalSessions().Delete(r.Context(), previous.WorkspaceID, previous.ID); err != nil && !errors.Is(err, models.ErrNotFound) {
			p.fail(w, r, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: cookieSecret, Path: "/portal/",
		Expires: sess.ExpiresAt, MaxAge: int(time.Until(sess.ExpiresAt).Seconds()),
		HttpOnly: true, Secure: p.secureCookies(r), SameSite: http.SameSiteStrictMode,
	})
	w.Header().Set("Referrer-Policy", "no-referrer")
	p.pages.render(w, r, http.StatusOK, "opened", view{Title: "Opening the portal", Brand: brandOf(&sess)})
}

// linkToken admits a token of a plausible length from an address not
// throttled for refused links, else answers for it.
func (p *Portal) linkToken(w http.ResponseWriter, r *http.Request, token string) (string, bool) {
	if wait, refused := p.openRefused(r); refused {
		p.tooMany(w, r, wait, "Too many portal links from this address were refused. Wait, then open a new link.")
		return "", false
	}
	if len(token) > maxSecretLength || len(token) <= len(secret.PortalTokenPrefix) {
		p.openFailed(r)
		p.refuseLink(w, r)
		return "", false
	}
	return token, true
}

// linkFound answers a lookup of a link that failed: refused (counted
// against the address) or an error.
func (p *Portal) linkFound(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, models.ErrNotFound):
		p.openFailed(r)
		p.refuseLink(w, r)
		return false
	case err != nil:
		p.fail(w, r, err)
		return false
	}
	return true
}

// currentSession is the live session of this browser's cookie, if any.
func (p *Portal) currentSession(r *http.Request) (*models.PortalSession, error) {
	c, err := r.Cookie(cookieName)
	if err != nil || len(c.Value) > maxSecretLength {
		return nil, nil
	}
	s, err := p.store.PortalSessions().ByCookie(r.Context(), secret.HashAPIKey(c.Value), p.now())
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}
