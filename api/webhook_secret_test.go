package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// withKnownWebhookKey gives the harness a WEBHOOK_SECRET_KEY and returns
// the box that opens what it seals.
func withKnownWebhookKey(t *testing.T) (func(*api.Deps), *secret.Box) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	return func(d *api.Deps) { d.Config.WebhookSecretKeys = [][]byte{key} }, box
}

// storedSecrets opens the subscription's stored current and previous
// secrets ("" when none).
func (h *harness) storedSecrets(box *secret.Box, id uuid.UUID) (current, previous string) {
	h.t.Helper()
	tg, err := h.store.Webhooks().Target(h.t.Context(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	open := func(sealed []byte) string {
		if sealed == nil {
			return ""
		}
		plain, err := box.Open(sealed, id[:])
		if err != nil {
			h.t.Fatalf("a stored secret does not open bound to its subscription: %v", err)
		}
		return string(plain)
	}
	return open(tg.SecretCiphertext), open(tg.PreviousSecretCiphertext)
}

func (h *harness) rotateHook(id uuid.UUID, body any) (models.WebhookSecretRotated, *http.Response) {
	h.t.Helper()
	rec := h.do(http.MethodPost, h.hooksPath(id.String(), "secret", "rotate"), h.admin.Secret, body)
	if rec.Code != http.StatusOK {
		h.t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(h.t, rec.Body.Bytes()); got != "previousSecretExpiresAt,secret" {
		h.t.Fatalf("rotation result has members %s", got)
	}
	var r models.WebhookSecretRotated
	hookDecode(h.t, rec.Body.Bytes(), &r)
	return r, rec.Result()
}

// A rotation returns a new secret once (no-store), keeps the replaced one
// as the previous secret for the grace period (24 hours by default), and
// replaces an earlier previous secret; a zero grace keeps none. Neither
// secret reaches the logs; each rotation is recorded in the subscription's
// outbox for the worker's relay.
func TestWebhookSecretRotation(t *testing.T) {
	opt, box := withKnownWebhookKey(t)
	h := newHarness(t, opt)
	c := h.createHook(map[string]any{"url": "https://hooks.example.com/a", "eventTypes": []string{"test.created"}})

	before := time.Now()
	r1, resp := h.rotateHook(c.ID, nil)
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", resp.Header.Get("Cache-Control"))
	}
	if !strings.HasPrefix(r1.Secret, "whsec_") || r1.Secret == c.Secret {
		t.Fatalf("rotated secret %q", r1.Secret)
	}
	if r1.PreviousSecretExpiresAt == nil || r1.PreviousSecretExpiresAt.Sub(before) < 24*time.Hour-time.Minute || r1.PreviousSecretExpiresAt.Sub(before) > 24*time.Hour+time.Minute {
		t.Fatalf("previousSecretExpiresAt %v, want 24 hours from now", r1.PreviousSecretExpiresAt)
	}
	if cur, prev := h.storedSecrets(box, c.ID); cur != r1.Secret || prev != c.Secret {
		t.Fatal("after a rotation: want the new secret current and the creation's previous")
	}

	r2, _ := h.rotateHook(c.ID, map[string]any{"gracePeriodHours": 2})
	if d := time.Until(*r2.PreviousSecretExpiresAt); d < 2*time.Hour-time.Minute || d > 2*time.Hour {
		t.Fatalf("previousSecretExpiresAt in %v, want 2 hours", d)
	}
	if cur, prev := h.storedSecrets(box, c.ID); cur != r2.Secret || prev != r1.Secret {
		t.Fatal("after a second rotation: the previous secret must be the first rotation's (the creation's stops at once)")
	}

	r3, _ := h.rotateHook(c.ID, map[string]any{"gracePeriodSeconds": 0})
	if r3.PreviousSecretExpiresAt != nil {
		t.Fatalf("no grace: previousSecretExpiresAt %v, want null", r3.PreviousSecretExpiresAt)
	}
	if cur, prev := h.storedSecrets(box, c.ID); cur != r3.Secret || prev != "" {
		t.Fatal("after a rotation without grace: want no previous secret")
	}

	logs := h.logs.String()
	for _, s := range []string{c.Secret, r1.Secret, r2.Secret, r3.Secret} {
		if strings.Contains(logs, strings.TrimPrefix(s, "whsec_")) {
			t.Fatal("a signing secret is in the logs")
		}
	}
	if seq := h.secretLifecycleSeq(c.ID); seq != 3 {
		t.Errorf("lifecycle_seq %d, want one per rotation (3)", seq)
	}

	other := uuid.New()
	h.run([]apiCase{
		{name: "both grace fields", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "secret", "rotate"), key: h.admin.Secret,
			body: map[string]any{"gracePeriodHours": 1, "gracePeriodSeconds": 1}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodSeconds"},
		{name: "over a week", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "secret", "rotate"), key: h.admin.Secret,
			body: map[string]any{"gracePeriodHours": 169}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodHours"},
		{name: "negative seconds", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "secret", "rotate"), key: h.admin.Secret,
			body: map[string]any{"gracePeriodSeconds": -1}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodSeconds"},
		{name: "fractional hours", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "secret", "rotate"), key: h.admin.Secret,
			body: map[string]any{"gracePeriodHours": 0.5}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodHours"},
		{name: "grace as a string", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "secret", "rotate"), key: h.admin.Secret,
			body: map[string]any{"gracePeriodHours": "1"}, status: 400, wantCode: "validation_failed", wantField: "gracePeriodHours"},
		{name: "absent subscription", method: http.MethodPost, url: h.hooksPath(other.String(), "secret", "rotate"), key: h.admin.Secret,
			status: 404, wantCode: "not_found"},
		{name: "malformed id", method: http.MethodPost, url: h.hooksPath("nope", "secret", "rotate"), key: h.admin.Secret,
			status: 404, wantCode: "not_found"},
	})
	if cur, _ := h.storedSecrets(box, c.ID); cur != r3.Secret {
		t.Fatal("a refused rotation changed the secret")
	}
}

// With Temporal unreachable a rotation still stands and answers at once: the
// API never calls Temporal for it. The rotation waits in the outbox, and
// no secret reaches the logs.
func TestWebhookSecretRotationSurvivesTemporalOutage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	tc, err := client.NewLazyClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	opt, box := withKnownWebhookKey(t)
	h := newHarness(t, opt, func(d *api.Deps) { d.Temporal = tc })
	c := h.createHook(map[string]any{"url": "https://hooks.example.com/a", "eventTypes": []string{"test.created"}})

	start := time.Now()
	r, _ := h.rotateHook(c.ID, map[string]any{"gracePeriodHours": 1})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the rotation took %v with Temporal down", took)
	}
	if cur, prev := h.storedSecrets(box, c.ID); cur != r.Secret || prev != c.Secret {
		t.Fatal("the rotation does not stand with Temporal down")
	}
	if seq := h.secretLifecycleSeq(c.ID); seq != 1 {
		t.Errorf("lifecycle_seq %d, want the rotation pending (1)", seq)
	}
	if strings.Contains(h.logs.String(), strings.TrimPrefix(r.Secret, "whsec_")) {
		t.Fatal("the secret is in the logs")
	}
}

// A test event is stored for the one subscription, whatever types it
// takes, and answered 202 with its id; a disabled subscription is refused
// with 409 webhook_disabled.
func TestWebhookTestEvent(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	c := h.createHook(map[string]any{"url": "https://hooks.example.com/a", "eventTypes": []string{"test.deleted"}})
	h.createHook(map[string]any{"url": "https://hooks.example.com/b", "eventTypes": []string{"test.deleted"}})

	rec := h.do(http.MethodPost, h.hooksPath(c.ID.String(), "test"), h.admin.Secret, nil)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("test event: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(t, rec.Body.Bytes()); got != "eventId" {
		t.Fatalf("answer has members %s, want eventId", got)
	}
	var acc models.WebhookTestAccepted
	hookDecode(t, rec.Body.Bytes(), &acc)
	ev, err := h.store.Events().Get(t.Context(), acc.EventID)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]string
	_ = json.Unmarshal(ev.Data, &data)
	if ev.Type != models.EventWebhookTest || len(ev.Recipients) != 1 || ev.Recipients[0] != c.ID || ev.WorkspaceID != h.admin.WorkspaceID ||
		data["subscriptionId"] != c.ID.String() || data["message"] == "" {
		t.Fatalf("stored %+v (data %s); want a webhook.test event for %s alone", ev, ev.Data, c.ID)
	}
	if typ, _ := eventtypes.Lookup(ev.Type); typ.Check(ev.Data) != nil {
		t.Errorf("data %s breaks the catalogue's webhook.test schema: %+v", ev.Data, typ.Check(ev.Data))
	}

	h.doJSON(http.MethodPut, h.hooksPath(c.ID.String()), h.admin.Secret, map[string]any{"enabled": false}, http.StatusOK, nil)
	h.run([]apiCase{
		{name: "disabled subscription", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "test"), key: h.admin.Secret,
			status: 409, wantCode: "webhook_disabled"},
		{name: "a member in the body", method: http.MethodPost, url: h.hooksPath(c.ID.String(), "test"), key: h.admin.Secret,
			body: map[string]any{"type": "test.created"}, status: 400, wantCode: "validation_failed", wantField: "type"},
		{name: "absent subscription", method: http.MethodPost, url: h.hooksPath(uuid.NewString(), "test"), key: h.admin.Secret,
			status: 404, wantCode: "not_found"},
	})
}

// secretLifecycleSeq is the number of rotations recorded in the
// subscription's outbox, none of them synced (no worker runs here).
func (h *harness) secretLifecycleSeq(id uuid.UUID) int64 {
	h.t.Helper()
	var seq, synced int64
	if err := h.db.NewRaw(`SELECT lifecycle_seq, lifecycle_synced_seq FROM webhook_subscriptions WHERE id = ?`, id).
		Scan(context.Background(), &seq, &synced); err != nil {
		h.t.Fatal(err)
	}
	if synced != 0 {
		h.t.Fatalf("lifecycle_synced_seq %d without a worker", synced)
	}
	return seq
}
