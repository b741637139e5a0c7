package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// switchingReceiver is an HTTPS endpoint that verifies every request with
// the one secret it currently trusts, as a customer's receiver does, and
// answers 204 when that verifies and 401 otherwise. trust switches it
// mid-run. It keeps every request for the test to check with any secret.
type switchingReceiver struct {
	*httptest.Server

	mu      sync.Mutex
	hook    *standardwebhooks.Webhook
	got     []signedRequest
	arrived chan struct{}
}

type signedRequest struct {
	header http.Header
	body   []byte
	ok     bool // verified with the secret trusted when it arrived
}

func newSwitchingReceiver(t *testing.T) *switchingReceiver {
	rc := &switchingReceiver{arrived: make(chan struct{}, 1000)}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		ok := rc.hook != nil && rc.hook.Verify(body, r.Header) == nil
		rc.got = append(rc.got, signedRequest{header: r.Header.Clone(), body: body, ok: ok})
		rc.mu.Unlock()
		rc.arrived <- struct{}{}
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *switchingReceiver) trust(t *testing.T, whsec string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(whsec)
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	rc.hook = wh
	rc.mu.Unlock()
}

// await waits for n requests in all and returns the requests since from.
func (rc *switchingReceiver) await(t *testing.T, from, n int) []signedRequest {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]signedRequest(nil), rc.got...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got[from:]
		}
		select {
		case <-rc.arrived:
		case <-deadline:
			t.Fatalf("receiver got %d requests, want %d", len(got), n)
		}
	}
}

func verifiesWith(t *testing.T, whsec string, r signedRequest) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(whsec)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(r.body, r.header) == nil
}

func rotateSecret(t *testing.T, env *testenv.Env, hook uuid.UUID, body any) models.WebhookSecretRotated {
	t.Helper()
	var r models.WebhookSecretRotated
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.String()+"/secret/rotate"), env.AdminKey, body, http.StatusOK, &r)
	return r
}

// A secret rotation with a receiver that switches secrets mid-grace loses
// nothing. Events published before the rotation, during its grace period
// (while the receiver still verifies with the old secret, and after it
// switched to the new one) and after the grace period all arrive, each
// once, each accepted on its first request. During the grace period every
// request carries both signatures (the old and the new secret verify it);
// after it, only the new one's. The secret's workflow (webhook-secret:<id>)
// ends the grace period and erases the old secret.
func TestSecretRotationReceiverSwitchesMidGraceLosesNothing(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second, time.Second} })
	rc := newSwitchingReceiver(t)
	hook := subscribe(t, env, nil, map[string]any{"url": rc.URL + "/hooks", "eventTypes": []string{"test.created"}})
	rc.trust(t, hook.Secret)

	published := map[string]bool{}
	publishN := func(phase string, n int) {
		for i := range n {
			published[publish(t, env, "test.created", map[string]any{"phase": phase, "i": i}).ID.String()] = true
		}
	}
	received := 0
	phase := func(name string, n int) []signedRequest {
		publishN(name, n)
		got := rc.await(t, received, received+n)
		received += n
		return got
	}

	for _, r := range phase("before", 3) {
		if !r.ok || strings.Count(r.header.Get("webhook-signature"), "v1,") != 1 {
			t.Fatalf("before the rotation: verified %v, signature %q", r.ok, r.header.Get("webhook-signature"))
		}
	}

	const grace = 12 * time.Second
	rot := rotateSecret(t, env, hook.ID, map[string]any{"gracePeriodSeconds": int(grace / time.Second)})
	if rot.PreviousSecretExpiresAt == nil {
		t.Fatal("no grace period")
	}
	both := func(when string, reqs []signedRequest) {
		t.Helper()
		for _, r := range reqs {
			sigs := strings.Split(r.header.Get("webhook-signature"), " ")
			if !r.ok || len(sigs) != 2 || !verifiesWith(t, hook.Secret, r) || !verifiesWith(t, rot.Secret, r) {
				t.Fatalf("%s: verified by the receiver %v, %d signatures (old verifies %v, new %v); want both",
					when, r.ok, len(sigs), verifiesWith(t, hook.Secret, r), verifiesWith(t, rot.Secret, r))
			}
		}
	}
	both("during grace, receiver on the old secret", phase("grace-old", 3))
	rc.trust(t, rot.Secret) // the customer deploys the new secret mid-grace
	both("during grace, receiver on the new secret", phase("grace-new", 3))
	if time.Now().After(*rot.PreviousSecretExpiresAt) {
		t.Fatalf("the grace period of %v ended before its phase did; the machine is too slow for this test", grace)
	}

	// The secret's workflow, started by the outbox relay, ends the grace
	// period at its expiry.
	eventually(t, 10*time.Second, "the outbox relay starts the secret's workflow", func() bool {
		_, err := env.Temporal.DescribeWorkflowExecution(context.Background(), workflows.WebhookSecretWorkflowID(hook.ID), "")
		return err == nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	var res workflows.WebhookSecretResult
	if err := env.Temporal.GetWorkflow(ctx, workflows.WebhookSecretWorkflowID(hook.ID), "").Get(ctx, &res); err != nil {
		t.Fatalf("secret workflow: %v", err)
	}
	if res.Outcome != workflows.WebhookSecretOutcomeIdle || time.Now().Before(*rot.PreviousSecretExpiresAt) {
		t.Fatalf("secret workflow ended %q before the expiry %v", res.Outcome, rot.PreviousSecretExpiresAt)
	}
	if tg, err := env.Store.Webhooks().Target(ctx, hook.ID); err != nil || tg.PreviousSecretCiphertext != nil {
		t.Fatalf("after the grace period the old secret is still stored (%v)", err)
	}

	for _, r := range phase("after", 3) {
		if !r.ok || strings.Contains(r.header.Get("webhook-signature"), " ") || verifiesWith(t, hook.Secret, r) {
			t.Fatalf("after the grace period: verified %v, signature %q, old secret verifies %v; want the new secret's alone",
				r.ok, r.header.Get("webhook-signature"), verifiesWith(t, hook.Secret, r))
		}
	}

	// Nothing lost, nothing retried: each event arrived once, accepted.
	seen := map[string]int{}
	for _, r := range rc.await(t, 0, received) {
		seen[r.header.Get("webhook-id")]++
	}
	for id := range published {
		if seen[id] != 1 {
			t.Errorf("event %s arrived %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(published) {
		t.Errorf("%d events arrived, %d published", len(seen), len(published))
	}
	if strings.Contains(env.Logs(), strings.TrimPrefix(rot.Secret, "whsec_")) {
		t.Fatal("the rotated secret is in the logs")
	}
}

// A test event reaches the one subscription, signed, as a webhook.test
// event naming it, and is recorded in its deliveries like any other.
func TestWebhookTestEventEndToEnd(t *testing.T) {
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/hooks", "eventTypes": []string{"test.deleted"}})
	other := newReceiver(t, http.StatusOK)
	subscribe(t, env, other, map[string]any{"url": other.URL, "eventTypes": []string{"test.deleted"}})

	var acc models.WebhookTestAccepted
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.ID.String()+"/test"), env.AdminKey, nil, http.StatusAccepted, &acc)
	got := rc.wait(t, 1, 20*time.Second)[0]
	if got.verifyErr != nil || got.id != acc.EventID.String() {
		t.Fatalf("request: webhook-id %s (want %s), verification %v", got.id, acc.EventID, got.verifyErr)
	}
	var body struct {
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil || body.Type != "webhook.test" || body.Data["subscriptionId"] != hook.ID.String() {
		t.Fatalf("body %s: want a webhook.test event naming the subscription", got.body)
	}
	awaitDelivery(t, env, acc.EventID, 20*time.Second, nil)
	var rec models.WebhookDelivery
	if err := json.Unmarshal(records(t, env, hook, 1)[0], &rec); err != nil || rec.EventID != acc.EventID || !rec.Success {
		t.Fatalf("record %+v, %v; want the test event's successful attempt", rec, err)
	}
	if n := other.count(); n != 0 {
		t.Fatalf("another subscription got %d requests", n)
	}
}
