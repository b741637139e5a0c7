package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/temporalcost"
	"github.com/openlayer-ai/workspace-service/internal/testenv"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A delivery with its recipients fixed at acceptance, its first attempts
// made locally: one receiver answers 500 then 200 (attempt 1 local, attempt
// 2 a regular activity after a timer), the other 200 at once. The history
// replays against today's code, and RECORD_HISTORIES=1 saves it as the
// golden history delivery_first_attempt_local_history.json, which the
// workflows package replays on every test run. The histories of earlier
// versions stay as they were recorded: delivery_history.json (recipients
// planned) and delivery_recipients_history.json (every attempt a regular
// activity).
func TestDeliveryGoldenHistory(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second} })
	flaky, ok := newReceiver(t, http.StatusInternalServerError, http.StatusOK), newReceiver(t, http.StatusOK)
	subscribe(t, env, flaky, map[string]any{"url": flaky.URL, "eventTypes": []string{"test.updated"}})
	subscribe(t, env, ok, map[string]any{"url": ok.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"golden": true})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	if len(res.Subscriptions) != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, s := range res.Subscriptions {
		if s.Outcome != workflows.OutcomeDelivered {
			t.Fatalf("result %+v", res)
		}
	}
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	if c := temporalcost.Of(h.GetEvents()); c.LocalResults != 2 || c.ActivityTasks != 1 {
		t.Fatalf("want both first attempts local and one retry as an activity: %v", c)
	}
	testenv.RecordHistory(t, h, "../../../workflows/testdata/delivery_first_attempt_local_history.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
}
