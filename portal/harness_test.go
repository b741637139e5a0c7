package portal_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/portal"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// harness is the API with the portal mounted, as app wires them, on a
// fresh database with one bootstrapped workspace; requests go through
// ServeHTTP, so every middleware runs.
type harness struct {
	t     *testing.T
	srv   *api.Server
	store *store.Store
	admin store.Credentials
	logs  *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newHarness(t *testing.T, tweak ...func(*config.Config)) *harness {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	admin, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	cfg.WebhookSecretKeys = [][]byte{key}
	for _, f := range tweak {
		f(&cfg)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	box, err := secret.NewBox(cfg.WebhookSecretKeys...)
	if err != nil {
		t.Fatal(err)
	}
	ops := &webhookops.Ops{Config: cfg, Store: st, Secrets: box, Log: log}
	srv := api.New(api.Deps{Config: cfg, Store: st, Log: log,
		Portal: portal.New(portal.Deps{Config: cfg, Store: st, Ops: ops, Log: log})})
	return &harness{t: t, srv: srv, store: st, admin: admin, logs: logs}
}

// api sends a JSON request with the admin's key and decodes the answer.
func (h *harness) api(method, path string, body any, want int, out any) {
	h.t.Helper()
	h.apiAs(h.admin.Secret, method, path, body, want, out)
}

// apiAs is api with another key.
func (h *harness) apiAs(key, method, path string, body any, want int, out any) {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	r := httptest.NewRequest(method, path, rd)
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, r)
	if rec.Code != want {
		h.t.Fatalf("%s %s: %d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			h.t.Fatal(err)
		}
	}
}

// mint mints a link for the harness's workspace.
func (h *harness) mint(body map[string]any) models.PortalSessionCreated {
	h.t.Helper()
	var c models.PortalSessionCreated
	h.api(http.MethodPost, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/portal-sessions", body, http.StatusCreated, &c)
	return c
}

// browser is a client of the portal: its cookie and its latest CSRF and
// one-time form tokens.
type browser struct {
	h      *harness
	host   string
	remote string // the client's address; httptest's default when ""
	origin string // the Origin header of its requests, none when ""
	cookie *http.Cookie
	csrf   string
	once   string
	// replace is the answer to the question whether to replace the
	// browser's session (the session's id), sent with a link's token.
	replace string
}

func (h *harness) browser() *browser { return &browser{h: h, host: "127.0.0.1:8080"} }

// open follows a minted link and presses its page's "Continue" (or "Open
// …") button, keeping the cookie it sets; a link refused at the GET
// answers that GET.
func (b *browser) open(link string) *httptest.ResponseRecorder {
	b.h.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.h.t.Fatal(err)
	}
	rec := b.do(http.MethodGet, u.RequestURI(), nil)
	if rec.Code != http.StatusOK {
		return rec
	}
	return b.continueOpen(u.Query().Get("token"))
}

// continueOpen POSTs a link's token as its page's button does, keeping the
// cookie it sets.
func (b *browser) continueOpen(token string) *httptest.ResponseRecorder {
	b.h.t.Helper()
	form := url.Values{"token": {token}}
	if b.replace != "" {
		form.Set("replace", b.replace)
	}
	rec := b.do(http.MethodPost, "/portal/open", form)
	for _, c := range rec.Result().Cookies() {
		if c.Name == "portal_session" {
			b.cookie = c
		}
	}
	return rec
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	onceField = regexp.MustCompile(`name="once" value="([^"]+)"`)
)

// do sends a request with the cookie; form, when not nil, is POSTed. It
// keeps the page's tokens.
func (b *browser) do(method, path string, form url.Values) *httptest.ResponseRecorder {
	b.h.t.Helper()
	rec := b.send(method, path, form)
	if m := csrfField.FindStringSubmatch(rec.Body.String()); m != nil {
		b.csrf = m[1]
	}
	if m := onceField.FindStringSubmatch(rec.Body.String()); m != nil {
		b.once = m[1]
	}
	return rec
}

// send is do without keeping tokens, safe to call concurrently.
func (b *browser) send(method, path string, form url.Values) *httptest.ResponseRecorder {
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, "http://"+b.host+path, rd)
	r.Host = b.host
	if b.remote != "" {
		r.RemoteAddr = b.remote
	}
	if b.origin != "" {
		r.Header.Set("Origin", b.origin)
	}
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.cookie != nil {
		r.AddCookie(&http.Cookie{Name: b.cookie.Name, Value: b.cookie.Value})
	}
	rec := httptest.NewRecorder()
	b.h.srv.ServeHTTP(rec, r)
	return rec
}

// post sends a form with the session's CSRF token and, unless the form
// has one, a one-time token of its own, as a page just loaded would.
func (b *browser) post(path string, form url.Values) *httptest.ResponseRecorder {
	b.h.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf)
	if form.Get("once") == "" {
		form.Set("once", rand.Text())
	}
	return b.do(http.MethodPost, path, form)
}

// follow loads the page a form's 303 leads to.
func (b *browser) follow(rec *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	b.h.t.Helper()
	if rec.Code != http.StatusSeeOther {
		b.h.t.Fatalf("want a 303 to follow, got %d: %s", rec.Code, rec.Body)
	}
	return b.do(http.MethodGet, rec.Header().Get("Location"), nil)
}

// opened is a browser whose portal session is open.
func (h *harness) opened(body map[string]any) *browser {
	h.t.Helper()
	b := h.browser()
	if rec := b.open(h.mint(body).URL); rec.Code != http.StatusOK || b.cookie == nil {
		h.t.Fatalf("open: %d, cookie %v: %s", rec.Code, b.cookie, rec.Body)
	}
	if rec := b.do(http.MethodGet, "/portal/", nil); rec.Code != http.StatusOK {
		h.t.Fatalf("GET /portal/: %d %s", rec.Code, rec.Body)
	}
	return b
}

// testEvent stores a test event for endpoint id, as "Send test event" does.
func (h *harness) testEvent(id string) models.Event {
	h.t.Helper()
	ev, err := h.store.Events().CreateTest(context.Background(), h.admin.WorkspaceID, uuid.MustParse(id), []byte(`{}`))
	if err != nil {
		h.t.Fatal(err)
	}
	return ev
}
