package webhooks_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A client retries a redelivery with its Idempotency-Key after the first
// request's claim lapsed (here: the claim made to look 15 s old and
// unanswered, as after a slow Temporal call and a database blip), so the
// retry runs the request again: the event's workflow drops the repeated
// signal and the receiver gets the redelivery once. The run, cancelled
// afterwards, is the golden history delivery_redelivery_once.json (the
// redelivery-id and cancelled-outcome markers).
func TestRedeliveryRetriedPastItsClaimIsMadeOnce(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} })
	rc := newReceiver(t, http.StatusInternalServerError)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"golden": "redelivery once"})
	awaitAttempts(t, env, hook.ID, ev.ID, 1)

	path := wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries/"+ev.ID.String()+"/redeliver")
	redeliver := func() {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, env.BaseURL+path, bytes.NewReader([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+env.AdminKey)
		req.Header.Set("Idempotency-Key", "redeliver-once")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("redeliver: %d (replayed %q), want a fresh 202", resp.StatusCode, resp.Header.Get("Idempotent-Replayed"))
		}
	}
	redeliver()
	ctx := context.Background()
	if _, err := env.DB.ExecContext(ctx, `UPDATE idempotency_keys SET response_status = NULL, response_headers = NULL,
		response_body = NULL, created_at = created_at - interval '1 minute' WHERE idempotency_key = 'redeliver-once'`); err != nil {
		t.Fatal(err)
	}
	redeliver()
	awaitAttempts(t, env, hook.ID, ev.ID, 2)
	time.Sleep(3 * time.Second) // time enough for a second redelivery to be made, were it taken
	made, err := env.Store.Deliveries().AttemptsMade(ctx, hook.ID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if made != 2 || rc.count() != 2 {
		t.Fatalf("%d attempts recorded, %d requests received; want 2 and 2: the retried redelivery was made twice", made, rc.count())
	}

	id := workflows.DeliveryWorkflowID(ev.ID)
	if err := env.Temporal.CancelWorkflow(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, 30*time.Second, &res)
	if res.Outcome != workflows.OutcomeError {
		t.Fatalf("cancelled run's result %+v, want error", res)
	}
	testenv.RecordGolden(t, env.History(t, id), "delivery_redelivery_once.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
}
