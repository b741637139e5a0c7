package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/models"
)

func (h *harness) portalSessionsPath(rest ...string) string {
	p := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/portal-sessions"
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// Minting answers a link with a single-use token that is stored only as a
// hash; listing shows the session without it; deleting ends it.
func TestPortalSessionsMintListDelete(t *testing.T) {
	h := newHarness(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h.clock.Set(now)

	rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, map[string]any{"expiresInSeconds": 600, "readOnly": true})
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store: the link is a secret", cc)
	}
	var created models.PortalSessionCreated
	hookDecode(t, rec.Body.Bytes(), &created)
	u, err := url.Parse(created.URL)
	if err != nil || u.Path != "/portal/open" || !strings.HasPrefix(u.Query().Get("token"), "olpt_") {
		t.Fatalf("url %q: want .../portal/open?token=olpt_...", created.URL)
	}
	if !created.ExpiresAt.Equal(now.Add(10 * time.Minute)) {
		t.Errorf("expiresAt %v, want %v", created.ExpiresAt, now.Add(10*time.Minute))
	}
	var stored int
	if err := h.db.NewRaw(`SELECT count(*) FROM portal_sessions WHERE token_hash::text LIKE '%olpt_%'`).Scan(t.Context(), &stored); err != nil || stored != 0 {
		t.Errorf("the token is stored in clear (%d rows, %v)", stored, err)
	}
	if strings.Contains(h.logs.String(), u.Query().Get("token")) {
		t.Error("the token is in the log")
	}

	var page models.Page[models.PortalSession]
	h.doJSON(http.MethodGet, h.portalSessionsPath(), h.admin.Secret, nil, http.StatusOK, &page)
	if len(page.Items) != 1 {
		t.Fatalf("list: %+v", page)
	}
	got := page.Items[0]
	if got.ID != created.ID || !got.ReadOnly || got.CreatedBy == nil || *got.CreatedBy != h.admin.UserID || got.OpenedAt != nil {
		t.Errorf("listed %+v", got)
	}

	// Expired sessions leave the list.
	h.clock.Set(now.Add(11 * time.Minute))
	h.doJSON(http.MethodGet, h.portalSessionsPath(), h.admin.Secret, nil, http.StatusOK, &page)
	if len(page.Items) != 0 {
		t.Errorf("an expired session is listed: %+v", page.Items)
	}
	h.clock.Set(now)

	h.doJSON(http.MethodDelete, h.portalSessionsPath(created.ID.String()), h.admin.Secret, nil, http.StatusNoContent, nil)
	h.doJSON(http.MethodDelete, h.portalSessionsPath(created.ID.String()), h.admin.Secret, nil, http.StatusNotFound, nil)
}

func TestPortalSessionsValidation(t *testing.T) {
	h := newHarness(t)
	for _, body := range []any{
		map[string]any{"expiresInSeconds": 59},
		map[string]any{"expiresInSeconds": 86401},
		map[string]any{"expiresInSeconds": 90.5},
	} {
		rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, body)
		checkError(t, rec, "validation_failed", "expiresInSeconds")
	}
	rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, map[string]any{"readOnly": "yes"})
	if rec.Code != http.StatusBadRequest {
		t.Errorf("readOnly \"yes\": %d", rec.Code)
	}
	for _, body := range []any{nil, map[string]any{}, map[string]any{"expiresInSeconds": 60}, map[string]any{"expiresInSeconds": 86400}} {
		if rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, body); rec.Code != http.StatusCreated {
			t.Errorf("%v: %d %s", body, rec.Code, rec.Body)
		}
	}
}

// PORTAL_PUBLIC_URL fixes a link's origin and path prefix: the Host a
// request reached the API by (a proxy may pass any on) changes nothing.
// Without it the link is on the request's host, https but on loopback.
func TestPortalSessionsPublicURL(t *testing.T) {
	h := newHarness(t, func(d *api.Deps) { d.Config.PortalPublicURL = "https://hooks.example.com/webhooks" })
	var created models.PortalSessionCreated
	rec := h.do(http.MethodPost, "http://evil.example"+h.portalSessionsPath(), h.admin.Secret, nil)
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	hookDecode(t, rec.Body.Bytes(), &created)
	if !strings.HasPrefix(created.URL, "https://hooks.example.com/webhooks/portal/open?token=olpt_") {
		t.Errorf("with PORTAL_PUBLIC_URL and Host evil.example the link is %q", created.URL)
	}

	plain := newHarness(t)
	for host, want := range map[string]string{
		"api.example.com": "https://api.example.com/portal/open?token=olpt_",
		"127.0.0.1:8080":  "http://127.0.0.1:8080/portal/open?token=olpt_",
	} {
		rec := plain.do(http.MethodPost, "http://"+host+plain.portalSessionsPath(), plain.admin.Secret, nil)
		hookDecode(t, rec.Body.Bytes(), &created)
		if !strings.HasPrefix(created.URL, want) {
			t.Errorf("without PORTAL_PUBLIC_URL, Host %s: %q, want %s…", host, created.URL, want)
		}
	}
}

// applicationName and logoUrl brand the portal; each is checked and capped,
// a logo is https only and cannot break out of the pages' policy.
func TestPortalSessionsBrandingValidation(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		field string
		value any
	}{
		{"applicationName", ""},
		{"applicationName", " Acme"},
		{"applicationName", strings.Repeat("a", 101)},
		{"applicationName", "Acme\nCloud"},
		{"applicationName", 7},
		{"logoUrl", "http://cdn.example.com/logo.png"},
		{"logoUrl", "javascript:alert(1)"},
		{"logoUrl", "data:image/png;base64,AAAA"},
		{"logoUrl", "/logo.png"},
		{"logoUrl", "https://cdn.example.com/logo.png; script-src *"},
		{"logoUrl", "https://cdn.example.com/a'b.png"},
		{"logoUrl", "https://cdn.example.com/a,b.png"},
		{"logoUrl", "https://user:pw@cdn.example.com/logo.png"},
		{"logoUrl", "https://cdn.example.com/logo.png#x"},
		{"logoUrl", "https://cdn.example.com/" + strings.Repeat("a", 500) + ".png"},
		// Found by the hostile test: a wildcard host widened the pages'
		// img-src to every https host; invisible characters reordered the
		// sentence around the name.
		{"logoUrl", "https://*"},
		{"logoUrl", "https://*.*/logo.png"},
		{"logoUrl", "https://cdn.example:99999/logo.png"},
		{"logoUrl", "https://cdn.example:0443/logo.png"},
		{"applicationName", "Acme \u202eevil"},
		{"applicationName", "a\u200bb"},
	} {
		rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, map[string]any{c.field: c.value})
		if _, isString := c.value.(string); !isString {
			if rec.Code != http.StatusBadRequest {
				t.Errorf("%s=%v: %d, want 400", c.field, c.value, rec.Code)
			}
			continue
		}
		checkError(t, rec, "validation_failed", c.field)
	}
	for _, body := range []map[string]any{
		{"applicationName": "Acme Cloud ☁", "logoUrl": "https://cdn.example.com/brand/logo.svg?v=3"},
		{"logoUrl": "https://cdn.example.com:8443/logo.png"},
		{"logoUrl": "https://[2001:db8::1]/logo.png"},
		{"logoUrl": "https://203.0.113.7/logo.png"},
		{"applicationName": nil, "logoUrl": nil},
		{"applicationName": strings.Repeat("é", 100)},
	} {
		if rec := h.do(http.MethodPost, h.portalSessionsPath(), h.admin.Secret, body); rec.Code != http.StatusCreated {
			t.Errorf("%v: %d %s", body, rec.Code, rec.Body)
		}
	}
}

// A link minted by a key that expires sooner than the asked lifetime says
// the key's expiry, when the session really ends (it said the asked one).
func TestPortalSessionsEndWithTheMintingKey(t *testing.T) {
	h := newHarness(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	h.clock.Set(now)
	keyExpires := now.Add(10 * time.Minute)
	var key models.APIKey
	h.doJSON(http.MethodPost, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/api-keys", h.admin.Secret,
		map[string]any{"expiresAt": keyExpires.Format(time.RFC3339)}, http.StatusCreated, &key)
	var created models.PortalSessionCreated
	h.doJSON(http.MethodPost, h.portalSessionsPath(), key.Secret, map[string]any{"expiresInSeconds": 3600}, http.StatusCreated, &created)
	if !created.ExpiresAt.Equal(keyExpires) {
		t.Errorf("expiresAt %v, want the key's expiry %v", created.ExpiresAt, keyExpires)
	}
}
