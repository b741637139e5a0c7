package bench

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// workflowID is the delivery workflow of an event (workflows.DeliveryWorkflowID).
func workflowID(eventID string) string { return "webhook-event:" + eventID }

// cost is what one workflow's history holds.
type cost struct {
	events  int // history events
	actions int // billable actions, Temporal Cloud's definition
	closed  bool
}

// historyCost reads an event's delivery workflow history and counts its
// billable actions the way Temporal Cloud defines them
// (https://docs.temporal.io/cloud/actions): a workflow started 1; every activity attempt started (the final
// ActivityTaskStarted carries the attempt count) 1 each; all local
// activities of one workflow task 1; a side effect or mutable side effect
// recorded 1; a timer started 1; a signal received or sent 1; a search
// attribute upsert 1 (except one that sets only TemporalChangeVersion, as
// workflow.GetVersion does); a child workflow 2; an update accepted 1.
// Version markers are not actions.
func historyCost(ctx context.Context, tc client.Client, eventID string) (cost, error) {
	var c cost
	laTasks := map[int64]bool{} // workflow tasks that recorded local activities
	it := tc.GetWorkflowHistory(ctx, workflowID(eventID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return c, err
		}
		c.events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
			enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
			enumspb.EVENT_TYPE_TIMER_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			c.actions++
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			c.actions += 2
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			c.actions += int(max(1, ev.GetActivityTaskStartedEventAttributes().GetAttempt()))
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := ev.GetMarkerRecordedEventAttributes()
			switch a.GetMarkerName() {
			case "LocalActivity":
				laTasks[a.GetWorkflowTaskCompletedEventId()] = true
			case "SideEffect", "MutableSideEffect":
				c.actions++
			}
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			fields := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
			if _, ok := fields["TemporalChangeVersion"]; !ok || len(fields) > 1 {
				c.actions++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			c.closed = true
		}
	}
	c.actions += len(laTasks)
	return c, nil
}
