package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/testenv"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A delivery with its recipients fixed at acceptance: one receiver answers
// 500 then 200, the other 200 at once. The history replays against
// today's code, and RECORD_HISTORIES=1 saves it as the golden history the
// workflows package replays on every test run.
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
	testenv.RecordHistory(t, env.History(t, workflows.DeliveryWorkflowID(ev.ID)), "../../../workflows/testdata/delivery_recipients_history.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
}
