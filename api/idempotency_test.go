package api_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

const idemHeader = "Idempotency-Key"

// count is how many rows table holds.
func (h *harness) count(table string) int {
	h.t.Helper()
	var n int
	if err := h.db.NewSelect().TableExpr(table).ColumnExpr("count(*)").Scan(context.Background(), &n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// publishWithKey publishes body with an Idempotency-Key.
func (h *harness) publishWithKey(secret, idemKey, body string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do(http.MethodPost, h.eventsPath(), secret, body, idemHeader, idemKey)
}

func eventID(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Code != http.StatusAccepted {
		t.Fatalf("publish: %d %s", rec.Code, rec.Body)
	}
	var acc models.EventAccepted
	hookDecode(t, rec.Body.Bytes(), &acc)
	return acc.ID.String()
}

func replayed(rec *httptest.ResponseRecorder) bool {
	return rec.Header().Get("Idempotent-Replayed") == "true"
}

const idemEvent = `{"type":"test.created","data":{"n":1}}`

// A retried publish returns the first event's id and stores one event;
// without the header every publish is a new event, as before.
func TestIdempotencyReplaysPublish(t *testing.T) {
	h := newHarness(t)
	first := h.publishWithKey(h.admin.Secret, "publish-1", idemEvent)
	second := h.publishWithKey(h.admin.Secret, "publish-1", idemEvent)
	if a, b := eventID(t, first), eventID(t, second); a != b {
		t.Fatalf("replay answered event %s, first %s", b, a)
	}
	if replayed(first) || !replayed(second) {
		t.Errorf("Idempotent-Replayed: first %q, second %q", first.Header().Get("Idempotent-Replayed"), second.Header().Get("Idempotent-Replayed"))
	}
	if ct := second.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("replayed Content-Type %q", ct)
	}
	if second.Body.String() != first.Body.String() {
		t.Errorf("replayed body %s, first %s", second.Body, first.Body)
	}
	if n := h.count("events"); n != 1 {
		t.Fatalf("%d events stored, want 1", n)
	}

	a := h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, idemEvent)
	b := h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, idemEvent)
	if eventID(t, a) == eventID(t, b) || replayed(a) || replayed(b) {
		t.Fatalf("publishes without Idempotency-Key: %s %s", a.Body, b.Body)
	}
	if n := h.count("events"); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}

// A retried key creation returns the same key and secret, and creates one
// key; the stored response holds the secret sealed, never in clear.
func TestIdempotencyReplaysAPIKeyCreate(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	body := `{"name":"ci"}`
	first := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, body, idemHeader, "key-1")
	second := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, body, idemHeader, "key-1")
	if first.Code != http.StatusCreated || second.Code != http.StatusCreated {
		t.Fatalf("create: %d %s, replay %d %s", first.Code, first.Body, second.Code, second.Body)
	}
	var k1, k2 models.APIKey
	hookDecode(t, first.Body.Bytes(), &k1)
	hookDecode(t, second.Body.Bytes(), &k2)
	if k1.ID != k2.ID || k1.Secret == "" || k1.Secret != k2.Secret || !replayed(second) {
		t.Fatalf("replay %s, first %s", second.Body, first.Body)
	}
	if cc := second.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("replayed Cache-Control %q, want no-store", cc)
	}
	if n := h.count("api_keys"); n != 2 {
		t.Fatalf("%d API keys, want 2 (the admin's and one created)", n)
	}
	var stored []byte
	if err := h.db.NewSelect().TableExpr("idempotency_keys").Column("response_body").Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), k1.Secret) {
		t.Fatal("the stored response holds the secret in clear")
	}

	// A rotation is replayed too: the same new secret, one rotation.
	rot1 := h.do(http.MethodPost, h.keysPath(k1.ID.String(), "rotate"), h.admin.Secret, nil, idemHeader, "rotate-1")
	rot2 := h.do(http.MethodPost, h.keysPath(k1.ID.String(), "rotate"), h.admin.Secret, nil, idemHeader, "rotate-1")
	var r1, r2 models.APIKey
	hookDecode(t, rot1.Body.Bytes(), &r1)
	hookDecode(t, rot2.Body.Bytes(), &r2)
	if rot1.Code != http.StatusOK || rot2.Code != http.StatusOK || r1.Secret == "" || r1.Secret != r2.Secret || !replayed(rot2) {
		t.Fatalf("rotate %d %s, replay %d %s", rot1.Code, rot1.Body, rot2.Code, rot2.Body)
	}
	if h.authStatus(r1.Secret) != http.StatusOK {
		t.Error("the replayed rotation's secret does not authenticate")
	}
}

// Without WEBHOOK_SECRET_KEY a response holding a secret is not stored, and
// its replay is refused rather than run twice.
func TestIdempotencySecretWithoutKeyRing(t *testing.T) {
	h := newHarness(t)
	first := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, `{}`, idemHeader, "key-1")
	if first.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Code, first.Body)
	}
	second := h.do(http.MethodPost, h.keysPath(), h.admin.Secret, `{}`, idemHeader, "key-1")
	if second.Code != http.StatusConflict {
		t.Fatalf("replay: %d %s", second.Code, second.Body)
	}
	checkError(t, second, "idempotency_key_reused", "")
	if n := h.count("api_keys"); n != 2 {
		t.Fatalf("%d API keys, want 2", n)
	}
	var withheld int
	if err := h.db.NewSelect().TableExpr("idempotency_keys").ColumnExpr("count(*)").
		Where("response_withheld AND response_body IS NULL").Scan(context.Background(), &withheld); err != nil || withheld != 1 {
		t.Fatalf("%d withheld rows (%v), want 1", withheld, err)
	}
}

// The same key for another request is refused; another API key's same
// Idempotency-Key is another key entirely.
func TestIdempotencyKeyScope(t *testing.T) {
	h := newHarness(t)
	eventID(t, h.publishWithKey(h.admin.Secret, "k", idemEvent))
	h.run([]apiCase{
		{name: "other body", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: `{"type":"test.created","data":{"n":2}}`, header: []string{idemHeader, "k"},
			status: http.StatusUnprocessableEntity, wantCode: "idempotency_key_mismatch"},
		{name: "other route", method: http.MethodPost, url: "/v1/projects", key: h.admin.Secret,
			body: idemEvent, header: []string{idemHeader, "k"},
			status: http.StatusUnprocessableEntity, wantCode: "idempotency_key_mismatch"},
		{name: "empty key", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: idemEvent, header: []string{idemHeader, " "},
			status: http.StatusBadRequest, wantCode: "invalid_idempotency_key"},
		{name: "key too long", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: idemEvent, header: []string{idemHeader, strings.Repeat("k", 256)},
			status: http.StatusBadRequest, wantCode: "invalid_idempotency_key"},
		{name: "key not ASCII", method: http.MethodPost, url: h.eventsPath(), key: h.admin.Secret,
			body: idemEvent, header: []string{idemHeader, "clé"},
			status: http.StatusBadRequest, wantCode: "invalid_idempotency_key"},
	})
	if n := h.count("events"); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
	other := h.addKey(models.RoleAdmin)
	rec := h.publishWithKey(other.Secret, "k", idemEvent)
	eventID(t, rec)
	if replayed(rec) || h.count("events") != 2 {
		t.Fatalf("another API key's request was replayed: %s (%d events)", rec.Body, h.count("events"))
	}
	if max := strings.Repeat("k", 255); eventID(t, h.publishWithKey(h.admin.Secret, max, idemEvent)) == "" {
		t.Fatal("a 255-character key was refused")
	}
}

// checkInProgress asserts the 409 for a key whose request is running: the
// SDKs must retry it, after a second.
func checkInProgress(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `"code":"idempotency_request_in_progress"`) {
		t.Fatalf("want 409 idempotency_request_in_progress: %d %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if got := rec.Header().Get("X-Should-Retry"); got != "" {
		t.Errorf("X-Should-Retry %q: the SDKs would not retry", got)
	}
}

// claimInProgress plants the in-progress row a running request holds.
func (h *harness) claimInProgress(idemKey, path, body, age string) {
	h.t.Helper()
	sum := sha256.Sum256([]byte(body))
	h.exec(`INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_method, request_path, request_hash, created_at)
		VALUES (?, ?, 'POST', ?, ?, now() - ?::interval)`, h.admin.APIKeyID, idemKey, path, sum[:], age)
}

// A key whose claim was committed in progress (a redelivery or recovery
// calling Temporal) answers 409 in progress; a claim past its lease of
// seconds (its process died) is taken over.
func TestIdempotencyInProgress(t *testing.T) {
	h := newHarness(t)
	h.claimInProgress("running", h.eventsPath(), idemEvent, "1 second")
	checkInProgress(t, h.publishWithKey(h.admin.Secret, "running", idemEvent))
	h.claimInProgress("abandoned", h.eventsPath(), idemEvent, "20 seconds")
	if rec := h.publishWithKey(h.admin.Secret, "abandoned", idemEvent); replayed(rec) || eventID(t, rec) == "" {
		t.Fatalf("abandoned claim: %s", rec.Body)
	}
	if n := h.count("events"); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
}

// A 4xx is stored and replayed; a 5xx releases the key, so the retry runs.
func TestIdempotencyErrorResponses(t *testing.T) {
	h := newHarness(t)
	bad := `{"type":"test.exploded","data":{}}`
	first := h.publishWithKey(h.admin.Secret, "bad", bad)
	second := h.publishWithKey(h.admin.Secret, "bad", bad)
	if first.Code != http.StatusBadRequest || second.Code != http.StatusBadRequest || !replayed(second) {
		t.Fatalf("validation error: %d, replay %d %v", first.Code, second.Code, second.Header())
	}
	if second.Body.String() != first.Body.String() || second.Header().Get("X-Should-Retry") != "false" {
		t.Errorf("replayed %s %v, first %s", second.Body, second.Header(), first.Body)
	}

	h.exec(`ALTER TABLE events RENAME TO events_away`)
	if rec := h.publishWithKey(h.admin.Secret, "flaky", idemEvent); rec.Code != http.StatusInternalServerError {
		t.Fatalf("with the events table away: %d %s", rec.Code, rec.Body)
	}
	h.exec(`ALTER TABLE events_away RENAME TO events`)
	if rec := h.publishWithKey(h.admin.Secret, "flaky", idemEvent); replayed(rec) || eventID(t, rec) == "" {
		t.Fatalf("retry after a 500: %s", rec.Body)
	}
	if n := h.count("events"); n != 1 {
		t.Fatalf("%d events, want 1", n)
	}
}

// A key is remembered for 24 hours: after that the same request runs again.
func TestIdempotencyExpiry(t *testing.T) {
	h := newHarness(t)
	a := eventID(t, h.publishWithKey(h.admin.Secret, "old", idemEvent))
	h.exec(`UPDATE idempotency_keys SET created_at = created_at - interval '25 hours'`)
	rec := h.publishWithKey(h.admin.Secret, "old", idemEvent)
	if b := eventID(t, rec); b == a || replayed(rec) {
		t.Fatalf("expired key replayed event %s", b)
	}
	if again := h.publishWithKey(h.admin.Secret, "old", idemEvent); !replayed(again) || eventID(t, again) != eventID(t, rec) {
		t.Fatalf("the renewed key is not replayed: %s", again.Body)
	}
	if n := h.count("events"); n != 2 {
		t.Fatalf("%d events, want 2", n)
	}
}

// A webhook's creation is replayed with its signing secret, and creates
// one subscription.
func TestIdempotencyReplaysWebhookCreate(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	body := `{"url":"https://example.com/hook","eventTypes":["test.created"]}`
	first := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body, idemHeader, "hook")
	second := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body, idemHeader, "hook")
	var c1, c2 models.WebhookCreated
	hookDecode(t, first.Body.Bytes(), &c1)
	hookDecode(t, second.Body.Bytes(), &c2)
	if first.Code != http.StatusCreated || second.Code != http.StatusCreated || c1.ID != c2.ID || c1.Secret == "" || c1.Secret != c2.Secret || !replayed(second) {
		t.Fatalf("create %d %s, replay %d %s", first.Code, first.Body, second.Code, second.Body)
	}
	if n := h.count("webhook_subscriptions"); n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
}

// The previous secret of a rotated key shares the key's id, and so its
// idempotency scope; it must not be handed a secret that a request made
// with the current secret obtained (a replayed webhook signing secret).
func TestIdempotencyReplayRefusesThePreviousSecretASecret(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	var k models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{"name": "ops"}, http.StatusCreated, &k)
	// Rotated: k.Secret is the previous secret, rotated.Secret the current.
	var rotated models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(k.ID.String(), "rotate"), k.Secret, map[string]any{"gracePeriodSeconds": 600}, http.StatusOK, &rotated)
	body := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}
	first := h.do(http.MethodPost, h.hooksPath(), rotated.Secret, body, idemHeader, "hook-1")
	if first.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", first.Code, first.Body)
	}
	again := h.do(http.MethodPost, h.hooksPath(), k.Secret, body, idemHeader, "hook-1")
	if again.Code != http.StatusConflict || strings.Contains(again.Body.String(), "whsec_") {
		t.Fatalf("replay to the previous secret: %d %s; want 409 idempotency_key_reused without the secret", again.Code, again.Body)
	}
	// The current secret still gets its replay.
	if same := h.do(http.MethodPost, h.hooksPath(), rotated.Secret, body, idemHeader, "hook-1"); same.Code != http.StatusCreated || same.Body.String() != first.Body.String() {
		t.Fatalf("replay to the current secret: %d %s", same.Code, same.Body)
	}
}
