package webhooks_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/temporalcost"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A delivery with its recipients fixed at acceptance, its first attempts
// made locally, its Outcome search attribute set as it ends: one receiver
// answers 500 then 200 (attempt 1 local, attempt 2 a regular activity
// after a timer), the other 200 at once. The history replays against
// today's code, and RECORD_HISTORIES=1 saves it as the golden history
// delivery.json of testenv.GoldenRelease, which the workflows package replays on every test
// run. Since 0.2.0 the run has priority keys (0.2.0/delivery.json).
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
	if got := upsertedOutcomes(t, h); !slices.Equal(got, []string{"delivered"}) {
		t.Fatalf("Outcome upserts %v, want one, delivered", got)
	}
	// The Web UI shows the input as recorded: the schedule in words.
	if in := string(h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0].GetData()); !strings.Contains(in, `"schedule":["1s"]`) {
		t.Fatalf("input %s, want the schedule as duration strings", in)
	}
	// Workspace-fair, first attempts at the default key, the retry after them.
	wantStartedPriority(t, h, workflows.PriorityFirstAttempt, env.WorkspaceID.String())
	if got := scheduledPriorities(h); !slices.Equal(got, []int32{workflows.PriorityRetry}) {
		t.Fatalf("attempt activities' priority keys %v, want the retry's %d", got, workflows.PriorityRetry)
	}
	testenv.RecordGolden(t, h, "delivery.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
}

// upsertedOutcomes are the values of Outcome the history's search
// attribute upserts set, in order.
func upsertedOutcomes(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var out []string
	for _, ev := range h.Events {
		p := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()[searchattr.Outcome.GetName()]
		if p == nil {
			continue
		}
		var s string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
