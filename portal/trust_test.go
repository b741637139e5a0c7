package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// A link previewer's GET shows a page with a "Continue" button and spends
// nothing, however often it comes; the button's POST spends the link once.
func TestPortalLinkPreviewSpendsNothing(t *testing.T) {
	h := newHarness(t)
	link := h.mint(nil).URL
	u, _ := url.Parse(link)
	token := u.Query().Get("token")
	for range 3 {
		bot := h.browser()
		rec := bot.do(http.MethodGet, u.RequestURI(), nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 0 {
			t.Fatalf("preview GET: %d, cookies %v", rec.Code, rec.Result().Cookies())
		}
		if !strings.Contains(body, `<form method="post" action="/portal/open">`) || !strings.Contains(body, ">Continue</button>") ||
			!strings.Contains(body, "webhook portal of <strong>Acme</strong>") {
			t.Fatalf("the link's page has no Continue form naming the workspace: %s", body)
		}
		if rp := rec.Header().Get("Referrer-Policy"); rp != "strict-origin" {
			t.Errorf("the link's page has Referrer-Policy %q: its address holds the token, and its form needs an Origin", rp)
		}
	}
	var opened int
	if err := h.store.DB().NewRaw(`SELECT count(*) FROM portal_sessions WHERE opened_at IS NOT NULL`).Scan(t.Context(), &opened); err != nil || opened != 0 {
		t.Fatalf("%d sessions opened by GETs (%v)", opened, err)
	}
	b := h.browser()
	if rec := b.continueOpen(token); rec.Code != http.StatusOK || b.cookie == nil {
		t.Fatalf("Continue: %d, cookie %v: %s", rec.Code, b.cookie, rec.Body)
	}
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
		t.Fatalf("the session opened by Continue: %d", rec.Code)
	}
	other := h.browser()
	if rec := other.continueOpen(token); rec.Code != http.StatusGone || other.cookie != nil {
		t.Errorf("a second POST of the token: %d, cookie %v, want 410", rec.Code, other.cookie)
	}
	if rec := other.do(http.MethodGet, u.RequestURI(), nil); rec.Code != http.StatusGone {
		t.Errorf("a GET of a spent link: %d, want 410", rec.Code)
	}
	// A POST from another site's page is refused before the token is looked at.
	fresh, _ := url.Parse(h.mint(nil).URL)
	cross := h.browser()
	cross.origin = "https://evil.example"
	if rec := cross.continueOpen(fresh.Query().Get("token")); rec.Code != http.StatusForbidden || cross.cookie != nil {
		t.Errorf("a cross-site POST: %d, want 403", rec.Code)
	}
	if rec := h.browser().open(fresh.String()); rec.Code != http.StatusOK {
		t.Errorf("the link refused cross-site still opens: %d", rec.Code)
	}
	if logs := h.logs.String(); strings.Contains(logs, token) || strings.Contains(logs, b.cookie.Value) {
		t.Error("the log holds the token or the cookie")
	}
}

// A link for a second workspace, opened where a session for another is
// live, asks first; until the person agrees the first session stays, and
// agreeing ends it.
func TestPortalOpenAsksBeforeReplacingSession(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	first := b.cookie
	second, err := h.store.Bootstrap(context.Background(), "Globex", "admin-"+uuid.NewString()[:8]+"@globex.test")
	if err != nil {
		t.Fatal(err)
	}
	var c models.PortalSessionCreated
	h.apiAs(second.Secret, http.MethodPost, "/v1/workspaces/"+second.WorkspaceID.String()+"/portal-sessions", nil, http.StatusCreated, &c)
	u, _ := url.Parse(c.URL)

	rec := b.do(http.MethodGet, u.RequestURI(), nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "You are signed in to Acme") ||
		!strings.Contains(body, "open <strong>Globex</strong> instead?") || !strings.Contains(body, ">Open Globex</button>") ||
		!strings.Contains(body, `<a href="/portal/">Stay in Acme</a>`) {
		t.Fatalf("no question before replacing the session: %d %s", rec.Code, body)
	}
	if len(rec.Result().Cookies()) != 0 {
		t.Fatal("the question set a cookie")
	}
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "for <strong>Acme</strong>") {
		t.Fatalf("the first session after the question: %d", rec.Code)
	}
	// A click in a mail withholds the SameSite=Strict cookie from the GET,
	// so "Continue" is pressed on a page that did not ask: the POST asks.
	rec = b.continueOpen(u.Query().Get("token"))
	if rec.Code != http.StatusOK || b.cookie != first || !strings.Contains(rec.Body.String(), "open <strong>Globex</strong> instead?") {
		t.Fatalf("Continue without an answer: %d, the cookie replaced: %v: %s", rec.Code, b.cookie != first, rec.Body)
	}
	m := regexp.MustCompile(`name="replace" value="([^"]+)"`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatal("the question has no answer to send")
	}
	b.replace = m[1]
	if rec := b.continueOpen(u.Query().Get("token")); rec.Code != http.StatusOK || b.cookie == first {
		t.Fatalf("open Globex: %d", rec.Code)
	}
	b.replace = ""
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "for <strong>Globex</strong>") {
		t.Errorf("after agreeing: %d, want Globex's portal", rec.Code)
	}
	old := h.browser()
	old.cookie = first
	if rec := old.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("the replaced session: %d, want 401 (ended)", rec.Code)
	}
	// Another link of the same workspace asks nothing.
	h.apiAs(second.Secret, http.MethodPost, "/v1/workspaces/"+second.WorkspaceID.String()+"/portal-sessions", nil, http.StatusCreated, &c)
	same, _ := url.Parse(c.URL)
	rec = b.do(http.MethodGet, same.RequestURI(), nil)
	if strings.Contains(rec.Body.String(), "You are signed in to") {
		t.Fatal("a link of the session's own workspace asks")
	}
	rec = b.do(http.MethodGet, u.RequestURI(), nil)
	if rec.Code != http.StatusGone {
		t.Errorf("Globex's spent link: %d", rec.Code)
	}
}

// Every page names the workspace and, when the link was minted with them,
// the host application and its logo, which the policy then admits.
func TestPortalShowsWhosePortalItIs(t *testing.T) {
	h := newHarness(t)
	b := h.opened(map[string]any{"applicationName": "Acme <Cloud>", "logoUrl": "https://cdn.example.com/brand/logo.png?v=2"})
	for _, path := range []string{"/portal/", "/portal/messages", "/portal/event-types", "/portal/endpoints/new", "/portal/nowhere"} {
		rec := b.do(http.MethodGet, path, nil)
		body := rec.Body.String()
		if !strings.Contains(body, "for <strong>Acme</strong>") || !strings.Contains(body, `<span class="app">Acme &lt;Cloud&gt;</span>`) ||
			!strings.Contains(body, `<img class="logo" src="https://cdn.example.com/brand/logo.png?v=2"`) {
			t.Errorf("%s does not show whose portal it is: %s", path, body)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' https://cdn.example.com/brand/logo.png;") {
			t.Errorf("%s: CSP %q does not admit the logo, and only it", path, csp)
		}
	}
	plain := h.opened(nil)
	rec := plain.do(http.MethodGet, "/portal/", nil)
	if body := rec.Body.String(); !strings.Contains(body, "for <strong>Acme</strong>") || strings.Contains(body, `class="logo"`) {
		t.Errorf("without branding: %s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self';") {
		t.Errorf("without a logo the CSP is %q", csp)
	}
}

// A session ends at its next request once its minting key is revoked, and
// a link that key minted no longer opens.
func TestPortalSessionEndsWhenItsKeyIsRevoked(t *testing.T) {
	h := newHarness(t)
	var key models.APIKey
	ws := "/v1/workspaces/" + h.admin.WorkspaceID.String()
	h.api(http.MethodPost, ws+"/api-keys", map[string]any{"name": "host app"}, http.StatusCreated, &key)
	var link models.PortalSessionCreated
	h.apiAs(key.Secret, http.MethodPost, ws+"/portal-sessions", nil, http.StatusCreated, &link)
	b := h.browser()
	if rec := b.open(link.URL); rec.Code != http.StatusOK {
		t.Fatalf("open: %d", rec.Code)
	}
	var unopened models.PortalSessionCreated
	h.apiAs(key.Secret, http.MethodPost, ws+"/portal-sessions", nil, http.StatusCreated, &unopened)
	kept := h.opened(nil) // minted by the admin's own key

	h.api(http.MethodDelete, ws+"/api-keys/"+key.ID.String(), nil, http.StatusNoContent, nil)
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("after the key's revocation: %d, want 401", rec.Code)
	}
	if rec := h.browser().open(unopened.URL); rec.Code != http.StatusGone {
		t.Errorf("a link of the revoked key: %d, want 410", rec.Code)
	}
	if rec := kept.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
		t.Errorf("a session of another key: %d, want 200", rec.Code)
	}
	var page models.Page[models.PortalSession]
	h.api(http.MethodGet, ws+"/portal-sessions", nil, http.StatusOK, &page)
	if len(page.Items) != 1 {
		t.Errorf("listed %d sessions, want the one still live", len(page.Items))
	}
}

// A rotation retires the secret it replaces as possibly leaked: the
// sessions and links that secret minted end with it, at once without a
// grace period, at its end with one (the hostile test kept a session alive
// after a rotation with no grace, with write access to the endpoints).
func TestPortalSessionEndsWhenItsSecretIsRotatedAway(t *testing.T) {
	h := newHarness(t)
	var key models.APIKey
	ws := "/v1/workspaces/" + h.admin.WorkspaceID.String()
	h.api(http.MethodPost, ws+"/api-keys", map[string]any{"name": "host app"}, http.StatusCreated, &key)
	mint := func(secret string) (models.PortalSessionCreated, *browser) {
		var link models.PortalSessionCreated
		h.apiAs(secret, http.MethodPost, ws+"/portal-sessions", nil, http.StatusCreated, &link)
		b := h.browser()
		if rec := b.open(link.URL); rec.Code != http.StatusOK {
			t.Fatalf("open: %d", rec.Code)
		}
		var unopened models.PortalSessionCreated
		h.apiAs(secret, http.MethodPost, ws+"/portal-sessions", nil, http.StatusCreated, &unopened)
		return unopened, b
	}
	unopened, b := mint(key.Secret)

	var graced models.APIKey
	h.apiAs(key.Secret, http.MethodPost, ws+"/api-keys/"+key.ID.String()+"/rotate", map[string]any{"gracePeriodHours": 1}, http.StatusOK, &graced)
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
		t.Errorf("inside the rotation's grace period: %d, want 200", rec.Code)
	}
	var cut models.APIKey
	h.apiAs(graced.Secret, http.MethodPost, ws+"/api-keys/"+key.ID.String()+"/rotate", map[string]any{}, http.StatusOK, &cut)
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("after a rotation retired its secret: %d, want 401", rec.Code)
	}
	if rec := h.browser().open(unopened.URL); rec.Code != http.StatusGone {
		t.Errorf("a link of the retired secret: %d, want 410", rec.Code)
	}
	_, fresh := mint(cut.Secret)
	if rec := fresh.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
		t.Errorf("a session of the current secret: %d, want 200", rec.Code)
	}
}

// A session ends at its next request once its minter is no longer an
// admin of the workspace: demoted, or removed from it.
func TestPortalSessionEndsWhenItsMinterLosesAdmin(t *testing.T) {
	for name, change := range map[string]string{
		"demoted": `UPDATE workspace_members SET role = 'member' WHERE user_id = ?`,
		"removed": `DELETE FROM workspace_members WHERE user_id = ?`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			b := h.opened(nil)
			link := h.mint(nil).URL
			if _, err := h.store.DB().ExecContext(context.Background(), change, h.admin.UserID); err != nil {
				t.Fatal(err)
			}
			if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
				t.Errorf("GET after the minter was %s: %d, want 401", name, rec.Code)
			}
			if rec := b.post("/portal/logout", nil); rec.Code == http.StatusOK {
				t.Errorf("a form after the minter was %s: %d", name, rec.Code)
			}
			if rec := h.browser().open(link); rec.Code != http.StatusGone {
				t.Errorf("a link minted before: %d, want 410", rec.Code)
			}
		})
	}
}

// At most PORTAL_MAX_SESSIONS sessions live per workspace: minting one
// more ends the oldest.
func TestPortalSessionsCappedPerWorkspace(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.PortalMaxSessions = 3 })
	var bs []*browser
	for range 3 {
		bs = append(bs, h.opened(nil))
	}
	unopened := h.mint(nil).URL // the fourth: ends bs[0]
	if rec := bs[0].do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("the oldest session past the cap: %d, want 401", rec.Code)
	}
	for i, b := range bs[1:] {
		if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
			t.Errorf("session %d: %d, want 200", i+2, rec.Code)
		}
	}
	h.mint(nil) // the fifth: ends bs[1]
	if rec := bs[1].do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("the next oldest: %d, want 401", rec.Code)
	}
	if rec := h.browser().open(unopened); rec.Code != http.StatusOK {
		t.Errorf("a newer unopened link: %d", rec.Code)
	}
	var n int
	if err := h.store.DB().NewRaw(`SELECT count(*) FROM portal_sessions`).Scan(t.Context(), &n); err != nil || n != 3 {
		t.Errorf("%d sessions stored (%v), want 3", n, err)
	}
}

// Static files are served under their content's hash, cacheable for a
// year; the bare name or another hash is a 404.
func TestPortalStaticAssetsHashed(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	body := h.browser().do(http.MethodGet, "/portal/ended", nil).Body.String()
	for _, f := range []struct{ name, pattern string }{
		{"portal.css", `href="(/portal/static/portal\.[0-9a-f]{12}\.css)"`},
		{"portal.js", `src="(/portal/static/portal\.[0-9a-f]{12}\.js)"`},
		{"favicon.svg", `href="(/portal/static/favicon\.[0-9a-f]{12}\.svg)"`},
	} {
		m := regexp.MustCompile(f.pattern).FindStringSubmatch(body)
		if m == nil {
			t.Errorf("the page does not reference %s by its hash: %s", f.name, body)
			continue
		}
		rec := b.do(http.MethodGet, m[1], nil)
		want, err := os.ReadFile("static/" + f.name)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Code != http.StatusOK || rec.Body.String() != string(want) {
			t.Errorf("%s: %d, want the file", m[1], rec.Code)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", m[1], cc)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" || rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s lacks the portal's headers", m[1])
		}
		wrong := regexp.MustCompile(`[0-9a-f]{12}`).ReplaceAllString(m[1], "000000000000")
		for _, p := range []string{"/portal/static/" + f.name, wrong} {
			if rec := b.do(http.MethodGet, p, nil); rec.Code != http.StatusNotFound || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("%s: %d, Cache-Control %q, want a 404 not cached", p, rec.Code, rec.Header().Get("Cache-Control"))
			}
		}
	}
}
