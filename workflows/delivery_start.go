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
func DeliveryStartOptions(eventID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       DeliveryWorkflowID(eventID),
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
}
