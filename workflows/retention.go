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
	Retention activities.Duration `json:"retention"`
}

// RetentionResult counts what a run deleted.
type RetentionResult struct {
	Deliveries int `json:"deliveries"`
	Events     int `json:"events"`
}

// RetentionWorkflow deletes delivery records older than the retention, and
// the events no record refers to any more. The Temporal schedule runs it
// daily.
func RetentionWorkflow(ctx workflow.Context, in *RetentionInput) (*RetentionResult, error) {
	// The purge resumes where it stopped (it deletes what is expired, in
	// batches that each heartbeat), so it retries without a cap on
	// attempts while the database is away; the schedule-to-close ends a
	// run before the next day's starts, which then takes over.
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Hour,
		ScheduleToCloseTimeout: 20 * time.Hour,
		HeartbeatTimeout:       2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 10 * time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute,
			MaximumAttempts: untilScheduleToClose},
	})
	var res activities.PurgeResult
	err := workflow.ExecuteActivity(ctx, deliveryActs.PurgeExpiredDeliveries,
		&activities.PurgeInput{Cutoff: workflow.Now(ctx).Add(-time.Duration(in.Retention))}).Get(ctx, &res)
	if err != nil {
		return nil, err
	}
	return &RetentionResult{Deliveries: res.Deliveries, Events: res.Events}, nil
}
