package portal_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A link opens the portal once: it sets a session cookie scoped to the
// portal (HttpOnly, SameSite=Strict, Secure but on loopback HTTP, expiring
// with the session) and a second use is refused; the token is never logged.
func TestPortalLinkOpensOnce(t *testing.T) {
	h := newHarness(t)
	link := h.mint(map[string]any{"expiresInSeconds": 600}).URL
	b := h.browser()
	rec := b.open(link)
	if rec.Code != http.StatusOK || b.cookie == nil {
		t.Fatalf("open: %d %v %s", rec.Code, b.cookie, rec.Body)
	}
	c := b.cookie
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/portal/" || c.MaxAge < 590 || c.MaxAge > 600 {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, not Secure on loopback HTTP, Path /portal/, about 600 s", c)
	}
	if body := rec.Body.String(); !strings.Contains(body, `http-equiv="refresh" content="0; url=/portal/"`) || strings.Contains(body, "olpt_") {
		t.Errorf("the opened page does not move on to the portal without the token: %s", body)
	}
	if rp := rec.Header().Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("the opened page's Referrer-Policy is %q: the next request would carry the token as its Referer", rp)
	}
	if rec := h.browser().open(link); rec.Code != http.StatusGone {
		t.Errorf("second use: %d, want 410", rec.Code)
	}
	token := link[strings.Index(link, "olpt_"):]
	if logs := h.logs.String(); strings.Contains(logs, token) || strings.Contains(logs, c.Value) {
		t.Error("the log holds the link's token or the cookie's secret")
	}
	if !strings.Contains(h.logs.String(), `"route":"/portal/open"`) {
		t.Error("the open request is not logged with its route template")
	}

	// Behind TLS termination on a public host, the cookie is Secure.
	other := h.browser()
	other.host = "portal.example.com"
	if rec := other.open(h.mint(nil).URL); rec.Code != http.StatusOK || other.cookie == nil || !other.cookie.Secure {
		t.Errorf("public host: %d, cookie %+v, want Secure", rec.Code, other.cookie)
	}
}

func TestPortalRefusesWithoutALiveSession(t *testing.T) {
	h := newHarness(t)
	if rec := h.browser().do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("no cookie: %d, want 401", rec.Code)
	}
	if rec := h.browser().open("http://127.0.0.1:8080/portal/open?token=olpt_guess"); rec.Code != http.StatusGone {
		t.Errorf("unknown token: %d, want 410", rec.Code)
	}
	created := h.mint(nil)
	b := h.browser()
	b.open(created.URL)
	if rec := b.do(http.MethodGet, "/portal/event-types", nil); rec.Code != http.StatusOK {
		t.Fatalf("event types: %d", rec.Code)
	}
	h.api(http.MethodDelete, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/portal-sessions/"+created.ID.String(), nil, http.StatusNoContent, nil)
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("after DELETE: %d, want 401", rec.Code)
	}
}

// Every page carries a policy that admits no inline script and no other
// origin, and nothing is cached.
func TestPortalSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	for _, path := range []string{"/portal/", "/portal/event-types", "/portal/endpoints/new"} {
		rec := b.do(http.MethodGet, path, nil)
		csp := rec.Header().Get("Content-Security-Policy")
		if rec.Code != http.StatusOK || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") ||
			strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: %d, CSP %q", path, rec.Code, csp)
		}
		if rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, rec.Header())
		}
		if strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("%s has an inline script", path)
		}
	}
}

// A form without the session's CSRF token, or from another origin, changes
// nothing; a read-only session changes nothing even with a token.
func TestPortalFormsNeedCSRFAndWriteAccess(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	form := url.Values{"url": {"https://example.com/hook"}, "eventTypes": {"test.created"}, "enabled": {"true"}}
	if rec := b.do(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusForbidden {
		t.Errorf("without a token: %d, want 403", rec.Code)
	}
	form.Set("csrf", "forged")
	if rec := b.do(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusForbidden {
		t.Errorf("with a forged token: %d, want 403", rec.Code)
	}
	ro := h.opened(map[string]any{"readOnly": true})
	form.Set("csrf", ro.csrf)
	if rec := ro.do(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
		t.Errorf("read-only: %d, want 403", rec.Code)
	}
	if rec := ro.do(http.MethodGet, "/portal/", nil); strings.Contains(rec.Body.String(), "Add an endpoint") {
		t.Error("a read-only session is offered to add an endpoint")
	}
	var n int
	if err := h.store.DB().NewRaw(`SELECT count(*) FROM webhook_subscriptions`).Scan(t.Context(), &n); err != nil || n != 0 {
		t.Fatalf("%d subscriptions after refused forms (%v)", n, err)
	}
	// The token of one session does not pass for another's.
	other := h.opened(nil)
	form.Set("csrf", other.csrf)
	if rec := b.do(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusForbidden {
		t.Errorf("another session's token: %d, want 403", rec.Code)
	}
	form.Set("csrf", b.csrf)
	form.Set("once", "a-page-s-one-time-token")
	if rec := b.do(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusSeeOther {
		t.Errorf("with its token: %d, want 303: %s", rec.Code, rec.Body)
	}
}
