package webhooks_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// A subscription whose every attempt fails for WEBHOOK_DISABLE_AFTER, over
// two events WEBHOOK_DISABLE_MIN_SPAN apart, is disabled with its reason
// and date (read back through the API), the workspace's other
// subscription that takes webhook.disabled is told (a signed delivery
// with ids only), the failing one is not, and enabling it by hand clears
// the reason.
func TestFailingSubscriptionIsDisabled(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) {
		c.WebhookRetrySchedule = []time.Duration{2 * time.Second, 2 * time.Second}
		c.WebhookDisableAfter = 2 * time.Second
		c.WebhookDisableMinSpan = time.Second
	})
	failing := newReceiver(t, http.StatusInternalServerError)
	hook := subscribe(t, env, failing, map[string]any{"url": failing.URL, "eventTypes": []string{"test.created", "webhook.disabled"}})
	listener := newReceiver(t, http.StatusOK)
	listening := subscribe(t, env, listener, map[string]any{"url": listener.URL, "eventTypes": []string{"webhook.disabled"}})

	// Event a's attempts fail at about 0, 2 and 4 s, b's at 1.5, 3.5 and
	// 5.5 s: the window reaches 2 s at a's second attempt, but with the
	// event that opened it; b's second attempt disables the subscription.
	publish(t, env, "test.created", map[string]any{"n": 1})
	time.Sleep(1500 * time.Millisecond)
	publish(t, env, "test.created", map[string]any{"n": 2})

	got := listener.wait(t, 1, 30*time.Second)
	arrived := time.Now()
	if got[0].verifyErr != nil {
		t.Fatalf("webhook.disabled does not verify: %v", got[0].verifyErr)
	}
	var body struct {
		Type string            `json:"type"`
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(got[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Type != "webhook.disabled" || len(body.Data) != 2 || body.Data["subscriptionId"] != hook.ID.String() || body.Data["reason"] != "failing" {
		t.Fatalf("listener got %s", got[0].body)
	}

	var sub models.WebhookSubscription
	env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, nil, http.StatusOK, &sub)
	if sub.Enabled || sub.DisabledReason == nil || *sub.DisabledReason != models.DisabledFailing || sub.DisabledAt == nil {
		t.Fatalf("the failing subscription reads %+v", sub)
	}
	t.Logf("webhook.disabled reached the listener %v after the subscription was disabled", arrived.Sub(*sub.DisabledAt).Round(time.Millisecond))
	var other models.WebhookSubscription
	env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+listening.ID.String()), env.AdminKey, nil, http.StatusOK, &other)
	if !other.Enabled || other.DisabledReason != nil {
		t.Fatalf("the listener reads %+v", other)
	}

	// Nothing more reaches the disabled subscription (its pending attempts
	// are skipped), and never the event about itself.
	time.Sleep(3 * time.Second)
	for _, d := range failing.wait(t, 1, time.Second) {
		var b struct{ Type string }
		if err := json.Unmarshal(d.body, &b); err != nil || b.Type != "test.created" {
			t.Fatalf("the failing subscription got %s", d.body)
		}
	}
	if n := failing.count(); n > 4 {
		t.Fatalf("the failing receiver got %d requests, want at most 4 (a 0, 2 s; b 1.5, 3.5 s)", n)
	}

	env.DoJSON(t, http.MethodPut, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, map[string]any{"enabled": true}, http.StatusOK, &sub)
	if !sub.Enabled || sub.DisabledReason != nil || sub.DisabledAt != nil {
		t.Fatalf("enabled again: %+v", sub)
	}
	env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, nil, http.StatusOK, &sub)
	if !sub.Enabled || sub.DisabledReason != nil || sub.DisabledAt != nil {
		t.Fatalf("read after enabling: %+v", sub)
	}
}
