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

// This file holds what starts and reads the RecoverWorkflow (its ID,
// start options, search attributes, memo), which the API uses.

// RecoverWorkflowID is the ID of a subscription's recovery: one runs at a
// time per subscription, and the ID's latest run is its latest recovery.
func RecoverWorkflowID(subscriptionID uuid.UUID) string {
	return "webhook-recover:" + subscriptionID.String()
}

// ErrRecoveryRunning: a recovery of the subscription runs already.
var ErrRecoveryRunning = errors.New("a recovery of this subscription is running")

// RecoverStartOptions start a subscription's recovery: a new run when the
// previous recovery has closed, a refusal (ErrRecoveryRunning) while one
// runs, so two recoveries never redeliver the same deliveries twice over.
// Findable in the Web UI by its WorkspaceId and SubscriptionIds search
// attributes and memo (kept by continue-as-new) and its summary (the first
// run's; every run shows its progress as current details).
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
	}
}

// StartRecover starts a recovery (see RecoverStartOptions) and returns its
// run id, the recovery's id. As StartDelivery, a start refused for its
// search attributes is made again without them (bare reports it, for the
// caller to log). A recovery already running answers ErrRecoveryRunning.
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

// RunningRecoveryID is the id (first run id) of the subscription's running
// recovery, for a refusal to name it.
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
// closed (RecoverProgressQuery). A subscription never recovered (or whose
// last recovery is past the namespace's retention) answers a
// *serviceerror.NotFound.
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
