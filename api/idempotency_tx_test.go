package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// slowEvents makes every insert into events take d, so that a test can
// act while a publish is in its handler.
func (h *harness) slowEvents(d time.Duration) {
	h.t.Helper()
	h.exec(`CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(` + d.String()[:len(d.String())-2] + `/1000.0); RETURN NEW; END $$`)
	h.exec(`CREATE TRIGGER slow BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION slow_insert()`)
}

// publishConcurrently sends n publishes with one key at once.
func (h *harness) publishConcurrently(n int, idemKey string) []*httptest.ResponseRecorder {
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := request(h.t, http.MethodPost, h.eventsPath(), h.admin.Secret, idemEvent, idemHeader, idemKey)
			<-start
			recs[i] = httptest.NewRecorder()
			h.srv.ServeHTTP(recs[i], req)
		}()
	}
	close(start)
	wg.Wait()
	return recs
}

// Concurrent requests with one key do the work once, and every one gets
// its response: the others wait for the first's transaction, then replay.
func TestIdempotencyConcurrentDuplicatesGetTheSameResponse(t *testing.T) {
	h := newHarness(t)
	h.slowEvents(300 * time.Millisecond) // the first is still at work when the others arrive
	recs := h.publishConcurrently(8, "same")
	ids, fresh := map[string]bool{}, 0
	for _, rec := range recs {
		if rec.Code != http.StatusAccepted {
			t.Fatalf("a duplicate got %d %s; want 202 and the first's event", rec.Code, rec.Body)
		}
		ids[eventID(t, rec)] = true
		if !replayed(rec) {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 || h.count("events") != 1 {
		t.Fatalf("%d event ids answered, %d not replayed, %d events stored; want 1, 1, 1", len(ids), fresh, h.count("events"))
	}
}

// While a request runs, no one sees its claim, nor its work: both appear
// with its response when it commits.
func TestIdempotencyClaimWorkAndResponseCommitTogether(t *testing.T) {
	h := newHarness(t)
	h.slowEvents(500 * time.Millisecond)
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- h.publishWithKey(h.admin.Secret, "together", idemEvent) }()
	before := 0 // polls that saw nothing yet
	for {
		select {
		case rec := <-done:
			eventID(t, rec)
			if before < 5 {
				t.Fatalf("only %d polls while the request ran", before)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
		// One snapshot: claims in progress, claims, events.
		var seen struct{ Pending, Keys, Events int }
		if err := h.db.NewRaw(`SELECT (SELECT count(*) FROM idempotency_keys WHERE response_status IS NULL) AS pending,
				(SELECT count(*) FROM idempotency_keys) AS keys, (SELECT count(*) FROM events) AS events`).
			Scan(context.Background(), &seen); err != nil {
			t.Fatal(err)
		}
		switch seen {
		case struct{ Pending, Keys, Events int }{0, 0, 0}:
			before++
		case struct{ Pending, Keys, Events int }{0, 1, 1}: // committed, being answered
		default:
			t.Fatalf("others see %d claims in progress, %d claims, %d events; want nothing, then a stored response with its event", seen.Pending, seen.Keys, seen.Events)
		}
	}
}

// When the response cannot be stored, the whole request rolls back: the
// client gets a 5xx, nothing is left, and a retry at once runs anew rather
// than waiting out a claim.
func TestIdempotencyUnstoredResponseLeavesNoClaim(t *testing.T) {
	h := newHarness(t)
	h.exec(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused'; END $$`)
	h.exec(`CREATE TRIGGER refuse BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse()`)
	first := h.publishWithKey(h.admin.Secret, "unstored", idemEvent)
	if first.Code < 500 {
		t.Fatalf("first: %d %s; want a 5xx, since its response could not be stored", first.Code, first.Body)
	}
	if k, e := h.count("idempotency_keys"), h.count("events"); k != 0 || e != 0 {
		t.Fatalf("%d claims and %d events left by a request answered %d; want none", k, e, first.Code)
	}
	h.exec(`DROP TRIGGER refuse ON idempotency_keys`)
	retry := h.publishWithKey(h.admin.Secret, "unstored", idemEvent)
	if eventID(t, retry) == "" || replayed(retry) || h.count("events") != 1 {
		t.Fatalf("retry: %d %s (%d events); want 202, run anew", retry.Code, retry.Body, h.count("events"))
	}
}

// A request whose key another transaction holds waits a bounded time,
// then answers 409 in progress with Retry-After; it never hangs.
func TestIdempotencyWaitForAHeldKeyIsBounded(t *testing.T) {
	h := newHarness(t)
	tx := h.holdKey("held")
	defer tx.Rollback()
	done := make(chan *httptest.ResponseRecorder, 1)
	start := time.Now()
	go func() { done <- h.publishWithKey(h.admin.Secret, "held", idemEvent) }()
	select {
	case rec := <-done:
		checkInProgress(t, rec)
		t.Logf("answered after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		_ = tx.Rollback()
		<-done
		t.Fatal("the request waited 10 s for a key another transaction holds")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if rec := h.publishWithKey(h.admin.Secret, "held", idemEvent); replayed(rec) || eventID(t, rec) == "" {
		t.Fatalf("once the holder rolled back: %d %s", rec.Code, rec.Body)
	}
}

// A refusal the database makes (jsonb refusing a number) aborts the
// handler's statements, yet is stored and replayed like any 4xx.
func TestIdempotencyStoresADatabaseRefusal(t *testing.T) {
	h := newHarness(t)
	huge := `{"type":"test.created","data":{"n":1e200000}}`
	first := h.publishWithKey(h.admin.Secret, "huge", huge)
	second := h.publishWithKey(h.admin.Secret, "huge", huge)
	if first.Code != http.StatusBadRequest || second.Code != http.StatusBadRequest || !replayed(second) || second.Body.String() != first.Body.String() {
		t.Fatalf("first %d %s, replay %d %s (replayed %v)", first.Code, first.Body, second.Code, second.Body, replayed(second))
	}
}

// Redelivery and recovery claim under a lease, committed before they call
// Temporal; a key held in another request's transaction makes them wait no
// longer than the others (409 after about 2 s), not until it ends.
func TestIdempotencyLeasedWaitForAHeldKeyIsBounded(t *testing.T) {
	h := newHarness(t)
	tx := h.holdKey("held")
	defer tx.Rollback()
	path := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/webhooks/" + uuid.NewString() + "/deliveries/" + uuid.NewString() + "/redeliver"
	done := make(chan *httptest.ResponseRecorder, 1)
	start := time.Now()
	go func() { done <- h.do(http.MethodPost, path, h.admin.Secret, "", idemHeader, "held") }()
	select {
	case rec := <-done:
		checkInProgress(t, rec)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("answered after %v, want about 2 s", took)
		}
	case <-time.After(10 * time.Second):
		_ = tx.Rollback()
		<-done
		t.Fatal("the redelivery waited 10 s for a key another transaction holds")
	}
}

// Duplicates waiting for a held key hold no connection between their tries,
// so they cannot starve other requests of the pool.
func TestIdempotencyWaitersLeaveThePoolFree(t *testing.T) {
	h := newHarness(t)
	h.db.SetMaxOpenConns(6)
	tx := h.holdKey("held")
	defer tx.Rollback()
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); h.publishWithKey(h.admin.Secret, "held", idemEvent) }()
	}
	time.Sleep(300 * time.Millisecond) // the duplicates are waiting
	start := time.Now()
	rec := h.do(http.MethodGet, "/v1/projects", h.admin.Secret, "")
	took := time.Since(start)
	wg.Wait()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /v1/projects beside waiting duplicates: %d %s", rec.Code, rec.Body)
	}
	if took > time.Second {
		t.Fatalf("GET /v1/projects took %v beside 10 duplicates waiting for a held key: they hold the pool", took)
	}
}

// holdKey claims key for the admin's API key in a transaction left open,
// as a request still in its handler holds it.
func (h *harness) holdKey(key string) bun.Tx {
	h.t.Helper()
	ctx := context.Background()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_method, request_path, request_hash, created_at)
		VALUES (?, ?, 'POST', '/', '\x00', now())`, h.admin.APIKeyID, key); err != nil {
		_ = tx.Rollback()
		h.t.Fatal(err)
	}
	return tx
}
