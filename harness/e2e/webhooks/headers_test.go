package webhooks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A subscription's custom headers reach a real HTTPS receiver on every
// attempt, the first and its retry, beside the signature headers; the API
// masks the sensitive one; a change applies to the next delivery; and
// neither value enters the delivery workflow's history or the logs.
func TestWebhookCustomHeaders(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second} })
	rc := newReceiver(t, http.StatusServiceUnavailable, http.StatusOK)
	const apiKey, tenant = "gw_key_7c1d9e4f2b", "tenant-3f8a61"
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/in", "eventTypes": []string{"test.created"},
		"headers": map[string]string{"X-Api-Key": apiKey, "X-Tenant": tenant}, "sensitiveHeaders": []string{"X-Api-Key"}})

	status, raw := env.Do(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, nil)
	var sub models.WebhookSubscription
	if err := json.Unmarshal(raw, &sub); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if status != http.StatusOK || strings.Contains(string(raw), apiKey) || sub.Headers["X-Api-Key"] != models.WebhookHeaderMask ||
		sub.Headers["X-Tenant"] != tenant || len(sub.SensitiveHeaders) != 1 {
		t.Fatalf("GET the subscription: %d %s", status, raw)
	}

	acc := publish(t, env, "test.created", map[string]any{"testId": "h1"})
	awaitDelivery(t, env, acc.ID, 30*time.Second, nil)
	got := rc.wait(t, 2, 10*time.Second)
	for i, d := range got {
		if d.verifyErr != nil || d.id != acc.ID.String() {
			t.Errorf("attempt %d: webhook-id %q, verification %v", i+1, d.id, d.verifyErr)
		}
		if d.header.Get("X-Api-Key") != apiKey || d.header.Get("X-Tenant") != tenant {
			t.Errorf("attempt %d: X-Api-Key %q, X-Tenant %q", i+1, d.header.Get("X-Api-Key"), d.header.Get("X-Tenant"))
		}
		if d.header.Get("Content-Type") != "application/json" {
			t.Errorf("attempt %d: Content-Type %q", i+1, d.header.Get("Content-Type"))
		}
	}

	// A change applies to the next delivery: the mask keeps the key.
	env.DoJSON(t, http.MethodPut, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, map[string]any{
		"headers": map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Region": "eu"}, "sensitiveHeaders": []string{"X-Api-Key"},
	}, http.StatusOK, nil)
	next := publish(t, env, "test.created", map[string]any{"testId": "h2"})
	awaitDelivery(t, env, next.ID, 30*time.Second, nil)
	last := rc.wait(t, 3, 10*time.Second)[2]
	if last.header.Get("X-Api-Key") != apiKey || last.header.Get("X-Region") != "eu" || last.header.Get("X-Tenant") != "" {
		t.Errorf("after the update: X-Api-Key %q, X-Region %q, X-Tenant %q", last.header.Get("X-Api-Key"), last.header.Get("X-Region"), last.header.Get("X-Tenant"))
	}

	for _, id := range []string{workflows.DeliveryWorkflowID(acc.ID), workflows.DeliveryWorkflowID(next.ID)} {
		h := env.History(t, id)
		b, err := protojson.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{string(b), payloadText(h)} {
			if strings.Contains(text, apiKey) || strings.Contains(text, tenant) {
				t.Fatalf("the history of %s holds a header value", id)
			}
		}
	}
	if logs := env.Logs(); strings.Contains(logs, apiKey) || strings.Contains(logs, tenant) {
		t.Fatal("a header value is in the processes' logs")
	}
}
