package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// scheduledPriorities are the priority keys of the history's attempt
// activities, in order (0: none set, inherited from the workflow).
func scheduledPriorities(h *historypb.History) []int32 {
	var out []int32
	for _, ev := range h.GetEvents() {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			out = append(out, a.GetPriority().GetPriorityKey())
		}
	}
	return out
}

// wantStartedPriority checks the run's priority key and that its fairness
// key is the workspace, which its activities inherit.
func wantStartedPriority(t *testing.T, h *historypb.History, key int32, workspaceID string) {
	t.Helper()
	p := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetPriority()
	if p.GetPriorityKey() != key || p.GetFairnessKey() != workspaceID {
		t.Fatalf("started with priority %d, fairness key %q; want %d and the workspace %s",
			p.GetPriorityKey(), p.GetFairnessKey(), key, workspaceID)
	}
}

// A redelivery asked through the API raises a running delivery to
// PriorityPerson first: the signal's workflow task would otherwise queue
// at the event's key, behind its own workspace's backlog.
func TestAPIRedeliveryRaisesARunningDelivery(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} })
	flaky := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	hook := subscribe(t, env, flaky, map[string]any{"url": flaky.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"priority": "raised"})
	awaitAttempts(t, env, hook.ID, ev.ID, 1)

	id := workflows.DeliveryWorkflowID(ev.ID)
	key := func() int32 {
		t.Helper()
		desc, err := env.Temporal.DescribeWorkflowExecution(t.Context(), id, "")
		if err != nil {
			t.Fatal(err)
		}
		return desc.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey()
	}
	if got := key(); got != workflows.PriorityFirstAttempt {
		t.Fatalf("the running delivery has priority %d before the redelivery, want %d", got, workflows.PriorityFirstAttempt)
	}
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries/"+ev.ID.String()+"/redeliver"),
		env.AdminKey, nil, http.StatusAccepted, nil)
	if got := key(); got != workflows.PriorityPerson {
		t.Fatalf("after the redelivery request its priority is %d, want %d", got, workflows.PriorityPerson)
	}
	awaitAttempts(t, env, hook.ID, ev.ID, 2)
}
