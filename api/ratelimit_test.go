package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// noRateLimits turns every rate limit off, for tests that hammer the API.
func noRateLimits(d *api.Deps) {
	d.Config.RateLimitReads = config.RateLimit{}
	d.Config.RateLimitWrites = config.RateLimit{}
	d.Config.RateLimitEvents = config.RateLimit{}
	d.Config.RateLimitAuthFailures = config.RateLimit{}
}

// limited sets small budgets: reads 1/s burst 3, writes 1/s burst 2,
// events 1/s burst 2, workspaces factor times that.
func limited(factor int) func(*api.Deps) {
	return func(d *api.Deps) {
		d.Config.RateLimitReads = config.RateLimit{Rate: 1, Burst: 3}
		d.Config.RateLimitWrites = config.RateLimit{Rate: 1, Burst: 2}
		d.Config.RateLimitEvents = config.RateLimit{Rate: 1, Burst: 2}
		d.Config.RateLimitWorkspaceFactor = factor
	}
}

// wantQuota checks a response's status and RateLimit-* headers.
func wantQuota(t *testing.T, rec *httptest.ResponseRecorder, status int, limit, remaining string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	h := rec.Header()
	if h.Get("RateLimit-Limit") != limit || h.Get("RateLimit-Remaining") != remaining || h.Get("RateLimit-Reset") == "" {
		t.Errorf("RateLimit-Limit %q, -Remaining %q, -Reset %q; want %s, %s and a reset",
			h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), limit, remaining)
	}
}

// wantRateLimited checks the 429: the error shape, Retry-After rounded up
// to whole seconds, and no X-Should-Retry: false (waiting does fix it).
func wantRateLimited(t *testing.T, rec *httptest.ResponseRecorder, retryAfter string) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429; body %s", rec.Code, rec.Body)
	}
	checkError(t, rec, "rate_limited", "")
	if got := rec.Header().Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
	if rec.Header().Get("RateLimit-Remaining") != "0" {
		t.Errorf("RateLimit-Remaining %q on a 429, want 0", rec.Header().Get("RateLimit-Remaining"))
	}
	if v := rec.Header().Values("X-Should-Retry"); len(v) != 0 {
		t.Errorf("X-Should-Retry %v on a 429; the SDKs must retry it", v)
	}
}

// Past its burst a key gets 429 with the headers, and is admitted again
// once its bucket has refilled. Another key of the workspace is not held
// back by it.
func TestRateLimitPerKey(t *testing.T) {
	h := newHarness(t, limited(4))
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	for i, remaining := range []string{"2", "1", "0"} {
		rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil)
		wantQuota(t, rec, http.StatusOK, "3", remaining)
		if i == 0 && rec.Header().Get("RateLimit-Reset") != "1" {
			t.Errorf("RateLimit-Reset %q after one read, want 1 (seconds until full)", rec.Header().Get("RateLimit-Reset"))
		}
	}
	wantRateLimited(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), "1")

	member := h.addKey(models.RoleMember)
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", member.Secret, nil), http.StatusOK, "3", "2")

	// Half a second refills half a token: still refused, Retry-After
	// rounds the remaining half second up.
	h.clock.Set(t0.Add(500 * time.Millisecond))
	wantRateLimited(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), "1")
	h.clock.Set(t0.Add(time.Second))
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), http.StatusOK, "3", "0")
}

// A workspace's budget is shared by its keys: with factor 1 it is as small
// as one key's, so two keys together run out. A request the workspace
// refuses spends nothing of its key's budget.
func TestRateLimitWorkspaceSharedAcrossKeys(t *testing.T) {
	h := newHarness(t, limited(1))
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	member := h.addKey(models.RoleMember)
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), http.StatusOK, "3", "2")
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), http.StatusOK, "3", "1")
	// The member's key bucket is full, the workspace's has one left: the
	// headers report the tighter.
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", member.Secret, nil), http.StatusOK, "3", "0")
	for range 3 {
		wantRateLimited(t, h.do(http.MethodGet, "/v1/projects", member.Secret, nil), "1")
	}
	wantRateLimited(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), "1")

	// One second later the workspace has one token, and the member's key
	// still two (the refusals cost it nothing).
	h.clock.Set(t0.Add(time.Second))
	wantQuota(t, h.do(http.MethodGet, "/v1/projects", member.Secret, nil), http.StatusOK, "3", "0")
}

// Reads, writes and event publishing have separate budgets: a key out of
// reads may still write, and one out of writes may still publish.
func TestRateLimitClassesAreSeparate(t *testing.T) {
	h := newHarness(t, limited(4))
	h.clock.Set(time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC))
	for range 3 {
		h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil)
	}
	wantRateLimited(t, h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil), "1")

	project := func(name string) *httptest.ResponseRecorder {
		return h.do(http.MethodPost, "/v1/projects", h.admin.Secret, map[string]any{"name": name, "taskType": "llm-base"})
	}
	wantQuota(t, project("a"), http.StatusCreated, "2", "1")
	wantQuota(t, project("b"), http.StatusCreated, "2", "0")
	wantRateLimited(t, project("c"), "1")
	wantRateLimited(t, h.do(http.MethodDelete, "/v1/projects/"+uuid.NewString(), h.admin.Secret, nil), "1")

	event := map[string]any{"type": "test.created", "data": map[string]any{"k": "v"}}
	wantQuota(t, h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, event), http.StatusAccepted, "2", "1")
	wantQuota(t, h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, event), http.StatusAccepted, "2", "0")
	wantRateLimited(t, h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, event), "1")
}

// Limits set to off admit everything and send no RateLimit-* headers.
func TestRateLimitOff(t *testing.T) {
	h := newHarness(t, noRateLimits)
	for range 50 {
		rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, nil)
		if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Limit") != "" {
			t.Fatalf("status %d, RateLimit-Limit %q; want 200 and no header", rec.Code, rec.Header().Get("RateLimit-Limit"))
		}
	}
	for range 50 {
		if rec := h.do(http.MethodGet, "/v1/projects", secret.APIKeyPrefix+"guess", nil); rec.Code != http.StatusUnauthorized {
			t.Fatalf("bad key with the limit off: %d", rec.Code)
		}
	}
}

// lookupCounter counts the credential lookups (CredentialByHash) that
// reach the database.
type lookupCounter struct{ n atomic.Int64 }

func (c *lookupCounter) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.Contains(e.Query, "FROM api_keys k") {
		c.n.Add(1)
	}
	return ctx
}

func (c *lookupCounter) AfterQuery(context.Context, *bun.QueryEvent) {}

// An address that fails authentication too often is refused with 429
// before its key is looked up, even with a valid key; other addresses
// are not affected.
func TestRateLimitFailedAuthentication(t *testing.T) {
	h := newHarness(t, func(d *api.Deps) {
		d.Config.RateLimitAuthFailures = config.RateLimit{Rate: 1.0 / 60, Burst: 3}
	})
	lookups := &lookupCounter{}
	h.db.AddQueryHook(lookups)
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	from := func(addr, key string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := request(t, http.MethodGet, "/v1/projects", key, nil)
		r.RemoteAddr = addr
		r.Header.Set("X-Forwarded-For", "198.51.100.7") // never trusted
		h.srv.ServeHTTP(rec, r)
		return rec
	}
	guess := secret.APIKeyPrefix + strings.Repeat("A", 43)
	for range 3 {
		if rec := from("203.0.113.9:4000", guess); rec.Code != http.StatusUnauthorized {
			t.Fatalf("guess within the budget: %d %s", rec.Code, rec.Body)
		}
	}
	if n := lookups.n.Load(); n != 3 {
		t.Fatalf("%d lookups for 3 guesses, want 3", n)
	}
	rec := from("203.0.113.9:4001", guess)
	wantRateLimited(t, rec, "60")
	if rec.Header().Get("RateLimit-Limit") != "3" {
		t.Errorf("RateLimit-Limit %q, want 3", rec.Header().Get("RateLimit-Limit"))
	}
	wantRateLimited(t, from("203.0.113.9:4002", h.admin.Secret), "60")
	if n := lookups.n.Load(); n != 3 {
		t.Errorf("%d lookups, want still 3: a refused address must cost no query", n)
	}
	// Another address, and the same one a minute later, are served.
	if rec := from("192.0.2.55:4000", h.admin.Secret); rec.Code != http.StatusOK {
		t.Errorf("another address: %d", rec.Code)
	}
	// A key that authenticated lately keeps working from a throttled
	// address (clients behind one proxy share it), with its lookup; a
	// guess from there is still refused without one.
	before := lookups.n.Load()
	if rec := from("203.0.113.9:4004", h.admin.Secret); rec.Code != http.StatusOK {
		t.Errorf("a recently valid key from a throttled address: %d %s", rec.Code, rec.Body)
	}
	wantRateLimited(t, from("203.0.113.9:4005", guess), "60")
	if n := lookups.n.Load(); n != before+1 {
		t.Errorf("%d lookups, want %d: only the recently valid key's", n, before+1)
	}
	// IPv6 peers share a bucket per /64.
	fresh := h.addKey(models.RoleMember).Secret
	for range 3 {
		from("[2001:db8:1:2::1]:4000", guess)
	}
	wantRateLimited(t, from("[2001:db8:1:2:ffff::9]:4000", fresh), "60")
	h.clock.Set(t0.Add(time.Minute))
	if rec := from("203.0.113.9:4003", h.admin.Secret); rec.Code != http.StatusOK {
		t.Errorf("a minute later: %d %s", rec.Code, rec.Body)
	}
}
