package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// RetentionScheduleID names a task queue's daily retention schedule: schedule
// IDs are per namespace, and each deployment has its own queue.
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

// RetentionWorkflow purges expired delivery records, daily by schedule.
func RetentionWorkflow(ctx workflow.Context, in *RetentionInput) (*RetentionResult, error) {
	// A missing or non-positive retention would put the cutoff at now and
	// purge every record: refuse it rather than trust the schedule's input.
	if in.Retention <= 0 {
		return nil, temporal.NewNonRetryableApplicationError("retention must be positive, got "+time.Duration(in.Retention).String(),
			"InvalidRetention", nil)
	}
	// The purge resumes where it stopped, so it retries while the database is
	// away; the schedule-to-close ends a run before the next day's starts.
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
