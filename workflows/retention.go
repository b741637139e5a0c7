package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// RetentionScheduleID names the daily retention schedule of a task queue
// (schedule IDs are per namespace, and each deployment has its own queue).
func RetentionScheduleID(taskQueue string) string { return "webhook-delivery-retention:" + taskQueue }

// RetentionInput is how long delivery records are kept.
type RetentionInput struct {
	Retention time.Duration
}

// RetentionResult counts what a run deleted.
type RetentionResult struct {
	Deliveries int
	Events     int
}

// RetentionWorkflow deletes delivery records older than the retention, and
// the events no record refers to any more. The Temporal schedule runs it
// daily.
func RetentionWorkflow(ctx workflow.Context, in *RetentionInput) (*RetentionResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 10 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 10},
	})
	var res activities.PurgeResult
	err := workflow.ExecuteActivity(ctx, deliveryActs.PurgeExpiredDeliveries,
		&activities.PurgeInput{Cutoff: workflow.Now(ctx).Add(-in.Retention)}).Get(ctx, &res)
	if err != nil {
		return nil, err
	}
	return &RetentionResult{Deliveries: res.Deliveries, Events: res.Events}, nil
}
