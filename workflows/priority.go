package workflows

import (
	"context"
	"errors"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// Priority keys: a task queue's backlog is served lowest key first, and
// within a key by fairness key (the workspace), so one workspace's backlog
// delays its own work, not another's. docs/operations.md#priorities says why
// each kind of work gets its key.
const (
	// PriorityPerson: someone is waiting on it (test events, redeliveries,
	// API-key and signing-secret deadlines).
	PriorityPerson = 1
	// PriorityRecovery: a recovery, asked by a person, but bulk.
	PriorityRecovery = 2
	// PriorityFirstAttempt: an event's first attempts (Temporal's default).
	PriorityFirstAttempt = 3
	// PriorityRetry: the retries of the schedule, to endpoints that failed.
	PriorityRetry = 4
)

// workspacePriority is the priority of a workspace's workflow; its
// activities inherit the fairness key and may set their own PriorityKey.
func workspacePriority(workspaceID uuid.UUID, key int) temporal.Priority {
	return temporal.Priority{PriorityKey: key, FairnessKey: workspaceID.String()}
}

// eventPriority is the priority a delivery workflow starts with.
func eventPriority(ev models.Event) temporal.Priority {
	if ev.Type == models.EventWebhookTest {
		return workspacePriority(ev.WorkspaceID, PriorityPerson)
	}
	return workspacePriority(ev.WorkspaceID, PriorityFirstAttempt)
}

// attemptPriorityChange versions the priority keys of attempt activities.
// It is asked for only before a regular activity, so a delivery answered by
// its local first attempts records no marker.
const attemptPriorityChange = "attempt-priority"

// attemptPriority is an attempt activity's PriorityKey; the fairness key
// is the workflow's (a run started before priorities has none).
func attemptPriority(ctx workflow.Context, in *activities.AttemptInput) temporal.Priority {
	if workflow.GetVersion(ctx, attemptPriorityChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return temporal.Priority{}
	}
	switch {
	case in.Manual:
		return temporal.Priority{PriorityKey: PriorityPerson}
	case in.AttemptNumber > 1:
		return temporal.Priority{PriorityKey: PriorityRetry}
	}
	return temporal.Priority{PriorityKey: PriorityFirstAttempt}
}

// RaiseToPerson gives a running delivery workflow PriorityPerson, so the
// workflow task of a redelivery signalled next goes ahead of its own
// workspace's backlog: a running workflow's tasks keep the key it started
// with, and a redelivery's attempt sets its own key only once that task has
// run. No running workflow (a redelivery then starts a run at
// PriorityPerson) is no error.
func RaiseToPerson(ctx context.Context, c client.Client, namespace string, eventID uuid.UUID) error {
	_, err := c.WorkflowService().UpdateWorkflowExecutionOptions(ctx, &workflowservice.UpdateWorkflowExecutionOptionsRequest{
		Namespace:                namespace,
		WorkflowExecution:        &commonpb.WorkflowExecution{WorkflowId: DeliveryWorkflowID(eventID)},
		WorkflowExecutionOptions: &workflowpb.WorkflowExecutionOptions{Priority: &commonpb.Priority{PriorityKey: PriorityPerson}},
		UpdateMask:               &fieldmaskpb.FieldMask{Paths: []string{"priority.priority_key"}},
	})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	return err
}
