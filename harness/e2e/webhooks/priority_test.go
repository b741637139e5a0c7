package webhooks_test

import (
	"testing"

	historypb "go.temporal.io/api/history/v1"
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
