package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// testAppBaseURL is the web app every harness links projects to.
const testAppBaseURL = "https://app.example.test"

// harness is the real router (api.New) on a fresh database with one
// bootstrapped workspace. Requests go straight to ServeHTTP through
// httptest, so no socket is involved but every middleware runs.
type harness struct {
	t     *testing.T
	srv   *api.Server
	store *store.Store
	db    *bun.DB
	admin store.Credentials // the workspace's first admin and its key
	clock *clock
	logs  *syncBuffer
}

// clock is a settable clock for Deps.Now; unset, it reads the real time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		return time.Now()
	}
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// syncBuffer collects the server's log lines; handlers log concurrently.
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

// newHarness builds the API on a fresh database. opts may adjust the Deps
// before the server is built. The server's background work (key usage
// recording) runs until the test ends.
func newHarness(t *testing.T, opts ...func(*api.Deps)) *harness {
	t.Helper()
	db := pgtest.NewDB(t)
	st := store.New(db)
	admin, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	cfg := config.Defaults()
	cfg.AppBaseURL = testAppBaseURL
	h := &harness{t: t, store: st, db: db, admin: admin, clock: &clock{}, logs: &syncBuffer{}}
	d := api.Deps{
		Config: cfg,
		Store:  st,
		Log:    slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:    h.clock.Now,
	}
	for _, o := range opts {
		o(&d)
	}
	h.srv = api.New(d)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.srv.Run(ctx) }()
	// Registered after pgtest's cleanup, so it runs first: the background
	// writer stops before its database is dropped.
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// request builds a request. body is nil (none), a string or []byte (sent
// as is) or anything else (sent as JSON). A body gets Content-Type
// application/json unless header overrides it; header is name, value pairs.
func request(t testing.TB, method, url, key string, body any, header ...string) *http.Request {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	r := httptest.NewRequest(method, url, rd)
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			r.Header.Del(header[i])
		} else {
			r.Header.Set(header[i], header[i+1])
		}
	}
	return r
}

// do sends one request through the real router.
func (h *harness) do(method, url, key string, body any, header ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.srv.ServeHTTP(rec, request(h.t, method, url, key, body, header...))
	return rec
}

// doJSON sends a request, requires status want and decodes the body into out.
func (h *harness) doJSON(method, url, key string, body any, want int, out any) {
	h.t.Helper()
	rec := h.do(method, url, key, body)
	if rec.Code != want {
		h.t.Fatalf("%s %s: status %d, want %d; body %s", method, url, rec.Code, want, rec.Body)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			h.t.Fatalf("%s %s: decode %q: %v", method, url, rec.Body, err)
		}
	}
}

// apiCase is one row of a handler table test.
type apiCase struct {
	name      string
	method    string
	url       string
	key       string
	body      any
	header    []string // extra request headers as name, value pairs
	status    int
	wantCode  string // the error code, for error statuses
	wantField string // a field the error details must name, if any
}

// run sends every case through the real router and checks the status and,
// for errors, the one error shape with the expected code.
func (h *harness) run(cases []apiCase) {
	h.t.Helper()
	for _, c := range cases {
		h.t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, request(t, c.method, c.url, c.key, c.body, c.header...))
			if rec.Code != c.status {
				t.Fatalf("%s %s: status %d, want %d; body %s", c.method, c.url, rec.Code, c.status, rec.Body)
			}
			if rec.Header().Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id header")
			}
			if c.status >= 400 {
				checkError(t, rec, c.wantCode, c.wantField)
			}
		})
	}
}

// errorResponse is the one error shape, decoded strictly.
type errorResponse struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
		RequestID string `json:"requestId"`
	} `json:"error"`
}

// checkError asserts rec holds the JSON error shape with code (and a
// details entry naming field, when field is set), that the body's request
// id is the header's, and that 401s carry a Bearer challenge.
func checkError(t *testing.T, rec *httptest.ResponseRecorder, code, field string) errorResponse {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e errorResponse
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %q is not the error shape: %v", rec.Body, err)
	}
	if e.Error.Code != code {
		t.Errorf("error code %q, want %q; body %s", e.Error.Code, code, rec.Body)
	}
	if e.Error.Message == "" {
		t.Errorf("error without a message: %s", rec.Body)
	}
	if id := rec.Header().Get("X-Request-Id"); e.Error.RequestID != id {
		t.Errorf("body requestId %q, header X-Request-Id %q", e.Error.RequestID, id)
	}
	if field != "" {
		named := false
		for _, d := range e.Error.Details {
			named = named || (d.Field == field && d.Message != "")
		}
		if !named {
			t.Errorf("details do not name field %q: %s", field, rec.Body)
		}
	}
	if rec.Code == http.StatusUnauthorized {
		if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer") {
			t.Errorf("401 with WWW-Authenticate %q, want a Bearer challenge", ch)
		}
	}
	// The SDKs retry 408, 429 and 5xx (and 409, unless told not to): every
	// other error is one a retry meets again, and says so.
	retryable := rec.Code >= 500 || rec.Code == http.StatusRequestTimeout || rec.Code == http.StatusTooManyRequests
	if got := rec.Header().Get("X-Should-Retry"); (got == "false") == retryable {
		t.Errorf("%d with X-Should-Retry %q", rec.Code, got)
	}
	return e
}

// exec runs SQL on the test database, for state the API cannot create.
func (h *harness) exec(query string, args ...any) {
	h.t.Helper()
	if _, err := h.db.ExecContext(context.Background(), query, args...); err != nil {
		h.t.Fatalf("%s: %v", query, err)
	}
}
