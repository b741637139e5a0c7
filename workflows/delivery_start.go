package workflows

import (
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// DeliveryWorkflowID is the ID of an event's delivery workflow.
func DeliveryWorkflowID(eventID uuid.UUID) string { return "webhook-event:" + eventID.String() }

// DeliveryStartOptions start an event's delivery so that starting it again
// is harmless: a running workflow is reused, and a finished one is not run
// again (the start returns the earlier run), so nothing is delivered twice.
//
// Eager start: the worker's outbox dispatcher starts workflows through the
// worker's own client, so when the worker has a free workflow-task slot the
// server hands the first task back in the start's response, skipping the
// task queue's round trip (the usual first delivery finishes in that one
// task). Without a free slot, or from another client, it is an ordinary
// start.
func DeliveryStartOptions(eventID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       DeliveryWorkflowID(eventID),
		TaskQueue:                taskQueue,
		EnableEagerStart:         true,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}
