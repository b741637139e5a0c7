package workflows

import (
	"context"
	"errors"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// RecoverWorkflowID is the ID of a subscription's recoveries, one at a time.
func RecoverWorkflowID(subscriptionID uuid.UUID) string {
	return "webhook-recover:" + subscriptionID.String()
}

// ErrRecoveryRunning refuses a start while the subscription's recovery runs.
var ErrRecoveryRunning = errors.New("a recovery of this subscription is running")

// RecoverStartOptions start a subscription's recovery, one at a time so that
// two never redeliver the same deliveries.
func RecoverStartOptions(workspaceID, subscriptionID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       RecoverWorkflowID(subscriptionID),
		TaskQueue:                                taskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		Memo:                                     map[string]any{"workspaceId": workspaceID.String(), "subscriptionId": subscriptionID.String()},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.WorkspaceID.ValueSet(workspaceID.String()),
			searchattr.SubscriptionIDs.ValueSet([]string{subscriptionID.String()}),
		),
		StaticSummary: "Recover failed deliveries of webhook subscription " + subscriptionID.String() +
			" (workspace " + workspaceID.String() + ")",
		Priority: workspacePriority(workspaceID, PriorityRecovery),
	}
}

// StartRecover returns the new recovery's run id (its id), or ErrRecoveryRunning.
func StartRecover(ctx context.Context, c client.Client, in *RecoverInput, taskQueue string) (runID string, bare bool, err error) {
	opts := RecoverStartOptions(in.WorkspaceID, in.SubscriptionID, taskQueue)
	var run client.WorkflowRun
	bare, err = startOrBare(func(opts client.StartWorkflowOptions) (err error) {
		run, err = c.ExecuteWorkflow(ctx, opts, RecoverWorkflow, in)
		return err
	}, opts)
	switch {
	case isAlreadyStarted(err):
		return "", false, ErrRecoveryRunning
	case err != nil:
		return "", false, err
	}
	return run.GetRunID(), bare, nil
}

func isAlreadyStarted(err error) bool {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	return errors.As(err, &started)
}

// RunningRecoveryID is the id (first run id) of the running recovery.
func RunningRecoveryID(ctx context.Context, c client.Client, subscriptionID uuid.UUID) (string, error) {
	resp, err := c.DescribeWorkflowExecution(ctx, RecoverWorkflowID(subscriptionID), "")
	if err != nil {
		return "", err
	}
	info := resp.GetWorkflowExecutionInfo()
	if id := info.GetFirstRunId(); id != "" {
		return id, nil
	}
	return info.GetExecution().GetRunId(), nil
}

// RecoverProgressOf reads the subscription's latest recovery, running or
// closed; none (or one past the namespace's retention) is a *serviceerror.NotFound.
func RecoverProgressOf(ctx context.Context, c client.Client, subscriptionID uuid.UUID) (*RecoverProgress, error) {
	v, err := c.QueryWorkflow(ctx, RecoverWorkflowID(subscriptionID), "", RecoverProgressQuery)
	if err != nil {
		return nil, err
	}
	var p RecoverProgress
	if err := v.Get(&p); err != nil {
		return nil, err
	}
	return &p, nil
}
