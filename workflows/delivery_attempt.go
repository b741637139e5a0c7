package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// attemptOptions: an HTTP outcome is a result, never an error, so Temporal
// retries only infrastructure failures, and a retry writes no second record
// (one per attempt number).
var attemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    45 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: untilScheduleToClose,
	},
}

// firstAttemptOptions: attempt 1 of every recipient is a local activity in
// the first workflow task, so an event answered at once costs one task; an
// error hands it to attemptOptions rather than hold the task with retries.
// An attempt (20 s of request plus the database) outlasts the 10 s task
// timeout, so the SDK heartbeats the task. The schedule-to-close adds 10 s for
// a slot; one started too late gives up unsent (activities.ErrLocalAttemptLate).
var firstAttemptOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    activities.MaxAttemptDuration + 10*time.Second,
	ScheduleToCloseTimeout: activities.MaxAttemptDuration + 20*time.Second,
	RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
}

// readOptions retry a local read through any outage. Past the task timeout
// each retry adds a timer and a task, so the interval grows to 10 minutes: a
// month of outage stays near 26,000 history events, inside the 51,200 limit.
var readOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    10 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute,
		MaximumAttempts: untilScheduleToClose},
}

// attempt makes attempt 1 locally first, then as a regular activity.
func (d *delivery) attempt(ctx workflow.Context, summary string, in *activities.AttemptInput) (activities.AttemptResult, error) {
	var r activities.AttemptResult
	if in.AttemptNumber == 1 {
		lo := firstAttemptOptions
		lo.Summary = summary
		lctx := workflow.WithLocalActivityOptions(ctx, lo)
		err := workflow.ExecuteLocalActivity(lctx, deliveryActs.AttemptDelivery, in).Get(ctx, &r)
		if err == nil || ctx.Err() != nil {
			return r, err
		}
		// Crowded is the expected answer for a slow subscription.
		if log := workflow.GetLogger(ctx); isApplicationError(err, activities.ErrLocalAttemptCrowded) {
			log.Debug("the subscription is slow, or its workspace holds its share of the worker; making the first attempt as a regular activity",
				"subscriptionId", in.SubscriptionID.String())
		} else {
			log.Warn("the first delivery attempt could not be made locally; making it as a regular activity",
				"subscriptionId", in.SubscriptionID.String(), "error", err)
		}
		r = activities.AttemptResult{}
	}
	o := attemptOptions
	o.Summary = summary
	o.Priority = attemptPriority(ctx, in)
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), deliveryActs.AttemptDelivery, in).Get(ctx, &r)
	return r, err
}

// isApplicationError reports whether err is an activity's application error of type typ.
func isApplicationError(err error, typ string) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == typ
}
