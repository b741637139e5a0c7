package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
)

// keyWrites counts UPDATE statements on api_keys and the rows they changed.
type keyWrites struct{ statements, rows int }

// countKeyWrites installs triggers that count every UPDATE statement run on
// api_keys (a statement-level trigger fires even when no row matches, so a
// write attempted per request would show) and every row it changed.
func (h *harness) countKeyWrites() func() keyWrites {
	h.t.Helper()
	h.exec(`CREATE TABLE test_key_writes (statements int NOT NULL, rows int NOT NULL)`)
	h.exec(`INSERT INTO test_key_writes VALUES (0, 0)`)
	h.exec(`CREATE FUNCTION test_count_key_statement() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN UPDATE test_key_writes SET statements = statements + 1; RETURN NULL; END $$`)
	h.exec(`CREATE FUNCTION test_count_key_row() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN UPDATE test_key_writes SET rows = rows + 1; RETURN NEW; END $$`)
	h.exec(`CREATE TRIGGER test_count_key_statement AFTER UPDATE ON api_keys
		FOR EACH STATEMENT EXECUTE FUNCTION test_count_key_statement()`)
	h.exec(`CREATE TRIGGER test_count_key_row AFTER UPDATE ON api_keys
		FOR EACH ROW EXECUTE FUNCTION test_count_key_row()`)
	return func() keyWrites {
		var w keyWrites
		if err := h.db.QueryRowContext(context.Background(), "SELECT statements, rows FROM test_key_writes").Scan(&w.statements, &w.rows); err != nil {
			h.t.Fatal(err)
		}
		return w
	}
}

func (h *harness) lastUsed(keyID uuid.UUID) *time.Time {
	h.t.Helper()
	var at *time.Time
	if err := h.db.QueryRowContext(context.Background(), "SELECT date_last_used FROM api_keys WHERE id = ?", keyID).Scan(&at); err != nil {
		h.t.Fatal(err)
	}
	return at
}

// eventually polls cond for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// hammer sends n authenticated list requests from 10 goroutines.
func hammer(t *testing.T, srv http.Handler, key string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan int, n)
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 10 {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, request(t, http.MethodGet, "/v1/projects", key, nil))
				if rec.Code != http.StatusOK {
					errs <- rec.Code
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for code := range errs {
		t.Fatalf("a request got %d", code)
	}
}

// A thousand requests with one key record its use with one write.
func TestDateLastUsedIsWrittenOncePerMinute(t *testing.T) {
	h := newHarness(t, noRateLimits)
	writes := h.countKeyWrites()
	if h.lastUsed(h.admin.APIKeyID) != nil {
		t.Fatal("a new key already has dateLastUsed")
	}
	start := time.Now()
	hammer(t, h.srv, h.admin.Secret, 1000)
	eventually(t, "dateLastUsed to be written", func() bool { return h.lastUsed(h.admin.APIKeyID) != nil })
	if at := *h.lastUsed(h.admin.APIKeyID); at.Before(start.Add(-time.Second)) || at.After(time.Now()) {
		t.Errorf("dateLastUsed %s, want within the run (started %s)", at, start)
	}
	// Give any stray queued write the time to land before counting.
	time.Sleep(200 * time.Millisecond)
	// One UPDATE, not one per request: the in-process memory spares the
	// database even the attempts the SQL condition would turn into no-ops.
	if w := writes(); w != (keyWrites{statements: 1, rows: 1}) {
		t.Errorf("1000 requests: %+v, want one statement writing one row", w)
	}
}

// With a pinned clock: no second write within the minute, from this process
// or from another API process (which only knows the stored timestamp), and
// one more once the minute has passed.
func TestDateLastUsedAdvancesAfterTheInterval(t *testing.T) {
	h := newHarness(t, noRateLimits)
	writes := h.countKeyWrites()
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	h.clock.Set(t0)
	hammer(t, h.srv, h.admin.Secret, 200)
	eventually(t, "the first write", func() bool { return writes().rows == 1 })
	if at := h.lastUsed(h.admin.APIKeyID); at == nil || !at.Equal(t0) {
		t.Fatalf("dateLastUsed %v, want %s", at, t0)
	}

	// A second API process shares the database but not the memory.
	otherDeps := api.Deps{
		Config: config.Defaults(), Store: h.store, Now: h.clock.Now,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	noRateLimits(&otherDeps)
	other := api.New(otherDeps)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); other.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	h.clock.Set(t0.Add(59 * time.Second))
	hammer(t, h.srv, h.admin.Secret, 100)
	hammer(t, other, h.admin.Secret, 100)
	time.Sleep(200 * time.Millisecond)
	if w := writes(); w != (keyWrites{statements: 1, rows: 1}) {
		t.Fatalf("within the minute: %+v, want still one statement and one row", w)
	}

	later := t0.Add(61 * time.Second)
	h.clock.Set(later)
	hammer(t, other, h.admin.Secret, 100)
	hammer(t, h.srv, h.admin.Secret, 100)
	eventually(t, "the second write", func() bool { return writes().rows >= 2 })
	time.Sleep(200 * time.Millisecond)
	// Each process may try once after the minute; only one row write lands.
	if w := writes(); w.rows != 2 || w.statements > 3 {
		t.Errorf("after the minute: %+v, want 2 rows written in at most 3 statements", w)
	}
	if at := h.lastUsed(h.admin.APIKeyID); at == nil || !at.Equal(later) {
		t.Errorf("dateLastUsed %v, want %s", at, later)
	}
}

// A request never waits on the dateLastUsed write: with the key's row
// locked by another transaction, requests still succeed, and the write
// lands once the lock is released.
func TestDateLastUsedNeverBlocksRequests(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below; this is for early failures
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM api_keys WHERE id = ? FOR UPDATE", h.admin.APIKeyID); err != nil {
		t.Fatal(err)
	}

	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for range 20 {
			rec := httptest.NewRecorder()
			h.srv.ServeHTTP(rec, request(t, http.MethodGet, "/v1/projects", h.admin.Secret, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("status %d while the key row is locked", rec.Code)
			}
		}
	}()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("requests waited on the locked key row")
	}
	if h.lastUsed(h.admin.APIKeyID) != nil {
		t.Fatal("dateLastUsed written through a row lock")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "dateLastUsed after the lock is released", func() bool { return h.lastUsed(h.admin.APIKeyID) != nil })
}
