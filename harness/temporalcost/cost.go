// Package temporalcost reads what a workflow's history cost: its events,
// tasks and billable actions as Temporal Cloud defines them. The benchmark
// (harness/bench) and the end-to-end cost test share it, so the table and
// the test count the same way.
package temporalcost

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// Cost is what one workflow's history holds.
type Cost struct {
	Events        int
	WorkflowTasks int // workflow tasks completed
	ActivityTasks int // activity tasks scheduled (regular activities)
	LocalResults  int // local activity results recorded
	Actions       int // billable actions, Temporal Cloud's definition
	Closed        bool
	Shape         []string // the event types, in order
}

// Of counts a history's billable actions the way Temporal Cloud defines
// them (https://docs.temporal.io/cloud/actions): a workflow started 1; each
// activity attempt started 1 (the final ActivityTaskStarted carries the
// attempt count); all local activities of one workflow task 1 together,
// and each heartbeat of a workflow task (an SDK keeping a task open while a
// local activity runs) 1; a timer started 1; a signal received or sent 1;
// an update accepted 1; a side effect or mutable side effect 1; a search
// attribute upsert 1, except one that sets only TemporalChangeVersion (as
// workflow.GetVersion does); a child workflow 2. Version markers are free.
func Of(evs []*historypb.HistoryEvent) Cost {
	var c Cost
	localTasks := map[int64]bool{} // workflow tasks that recorded local results
	c.Events = len(evs)
	for i, e := range evs {
		name := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, enumspb.EVENT_TYPE_TIMER_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			c.Actions++
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			c.Actions += 2
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			c.ActivityTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			c.Actions += int(max(1, e.GetActivityTaskStartedEventAttributes().GetAttempt()))
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			c.WorkflowTasks++
			// A heartbeat: the task completed and the next one was scheduled
			// at once, with nothing but its own commands in between.
			j := i + 1
			for j < len(evs) && commandEvent(evs[j]) {
				j++
			}
			if j < len(evs) && evs[j].GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED {
				c.Actions++
				name += "(heartbeat)"
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			a := e.GetMarkerRecordedEventAttributes()
			name += "(" + a.GetMarkerName() + ")"
			switch a.GetMarkerName() {
			case "LocalActivity":
				c.LocalResults++
				localTasks[a.GetWorkflowTaskCompletedEventId()] = true
			case "SideEffect", "MutableSideEffect":
				c.Actions++
			}
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			fields := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
			if _, ok := fields["TemporalChangeVersion"]; !ok || len(fields) > 1 {
				c.Actions++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			c.Closed = true
		}
		c.Shape = append(c.Shape, name)
	}
	c.Actions += len(localTasks)
	return c
}

// commandEvent is an event a workflow task's commands write.
func commandEvent(e *historypb.HistoryEvent) bool {
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_MARKER_RECORDED, enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
		enumspb.EVENT_TYPE_TIMER_STARTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		return true
	}
	return false
}

func (c Cost) String() string {
	return fmt.Sprintf("%d events, %d workflow tasks, %d activity tasks, %d local results, %d billable actions: %s",
		c.Events, c.WorkflowTasks, c.ActivityTasks, c.LocalResults, c.Actions, strings.Join(c.Shape, " "))
}
