package activities_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// rotate gives sub a new secret with the grace period and returns it.
func (f *fixture) rotate(t *testing.T, sub models.WebhookSubscription, grace time.Duration) string {
	t.Helper()
	whsec, _ := secret.NewWebhookSecret()
	sealed, err := f.Box.Seal([]byte(whsec), sub.ID[:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.Webhooks().RotateSecret(f.Ctx, f.Workspace.WorkspaceID, sub.ID, sealed, nil, grace); err != nil {
		t.Fatal(err)
	}
	return whsec
}

// verifies reports whether the reference library accepts the request with
// the secret.
func verifies(t *testing.T, whsec string, body []byte, h http.Header) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(whsec)
	if err != nil {
		t.Fatal(err)
	}
	return wh.Verify(body, h) == nil
}

// During a grace period a delivery carries the new secret's signature and
// the old one's ("v1,<new> v1,<old>"); once it has ended (by the
// database's clock, before anything erased the old secret), only the
// new one's.
func TestAttemptSignsWithBothSecretsDuringGrace(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusNoContent) })
	sub, first := f.Subscribe(t, rc.URL)
	second := f.rotate(t, sub, time.Hour)

	ev := f.Publish(t, `{"n":1}`)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("result %+v", res)
	}
	got := rc.Requests()[0]
	sigs := strings.Split(got.Header.Get("webhook-signature"), " ")
	if len(sigs) != 2 {
		t.Fatalf("webhook-signature %q: want two signatures during the grace period", got.Header.Get("webhook-signature"))
	}
	for name, s := range map[string]string{"new": second, "old": first} {
		if !verifies(t, s, got.Body, got.Header) {
			t.Errorf("the %s secret does not verify the request", name)
		}
	}
	newOnly := got.Header.Clone()
	newOnly.Set("webhook-signature", sigs[0])
	if !verifies(t, second, got.Body, newOnly) {
		t.Error("the first signature is not the new secret's")
	}

	// A rotation during the grace period: the oldest secret stops at once.
	third := f.rotate(t, sub, 50*time.Millisecond)
	ev2 := f.Publish(t, `{"n":2}`)
	f.attempt(t, ev2, sub, 1)
	got = rc.Requests()[1]
	if !verifies(t, third, got.Body, got.Header) || !verifies(t, second, got.Body, got.Header) || verifies(t, first, got.Body, got.Header) {
		t.Errorf("after a second rotation: want the third and second secrets to verify, not the first (header %q)", got.Header.Get("webhook-signature"))
	}

	time.Sleep(100 * time.Millisecond)
	ev3 := f.Publish(t, `{"n":3}`)
	f.attempt(t, ev3, sub, 1)
	got = rc.Requests()[2]
	if h := got.Header.Get("webhook-signature"); strings.Contains(h, " ") || !verifies(t, third, got.Body, got.Header) || verifies(t, second, got.Body, got.Header) {
		t.Errorf("after the grace period: header %q; want only the newest secret's signature", h)
	}
}

// A previous secret no key opens holds the attempt back with the
// retryable UndecryptableSecret error (nothing sent or recorded), rather
// than send without the signature its receiver may still rely on; the
// error names the previous secret and holds no secret.
func TestAttemptWithUndecryptablePreviousSecretRetries(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusNoContent) })
	sub, _ := f.Subscribe(t, rc.URL)
	f.rotate(t, sub, time.Hour)
	if _, err := f.Store.DB().NewUpdate().Table("webhook_subscriptions").Set("previous_secret_ciphertext = ?", []byte("garbage")).
		Where("id = ?", sub.ID).Exec(f.Ctx); err != nil {
		t.Fatal(err)
	}
	ev := f.Publish(t, `{}`)
	_, err := f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.NonRetryable() || appErr.Type() != activities.ErrUndecryptableSecret ||
		!strings.Contains(err.Error(), "previous signing secret") {
		t.Fatalf("err %v; want a retryable %s error about the previous secret", err, activities.ErrUndecryptableSecret)
	}
	if n := rc.Count(); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// The daily retention run erases previous secrets whose grace period has
// ended, the backstop for a rotation whose secret workflow never started,
// and leaves one still in its grace period.
func TestPurgeErasesExpiredPreviousSecrets(t *testing.T) {
	f := newFixture(t, true)
	expired, _ := f.Subscribe(t, "https://example.com/a")
	current, _ := f.Subscribe(t, "https://example.com/b")
	f.rotate(t, expired, time.Millisecond)
	f.rotate(t, current, time.Hour)
	time.Sleep(20 * time.Millisecond)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	val, err := env.ExecuteActivity(f.Acts.PurgeExpiredDeliveries, &activities.PurgeInput{Cutoff: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var res activities.PurgeResult
	if err := val.Get(&res); err != nil || res.PreviousSecrets != 1 {
		t.Fatalf("result %+v, %v; want one previous secret erased", res, err)
	}
	for _, c := range []struct {
		sub  models.WebhookSubscription
		want bool
	}{{expired, false}, {current, true}} {
		sub, want := c.sub, c.want
		tg, err := f.Store.Webhooks().Target(f.Ctx, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if (tg.PreviousSecretCiphertext != nil) != want {
			t.Errorf("subscription %s: previous secret stored %v, want %v", sub.URL, tg.PreviousSecretCiphertext != nil, want)
		}
	}
}
