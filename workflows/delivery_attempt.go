package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// attemptOptions: an attempt's HTTP outcome is its result, never an error,
// so Temporal retries an attempt only for infrastructure failures (worker
// lost mid-attempt, database down, a secret this worker's keys cannot
// open), and the activity makes such retries idempotent. Every such error
// is retryable: another try, perhaps on another replica, can succeed. The
// start-to-close covers connect, TLS, response and the database; the
// schedule-to-close is set deliberately to OutageTolerance (unset, it
// would be unlimited, which is no better and hides the intent).
var attemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    45 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: untilScheduleToClose,
	},
}

// firstAttemptOptions: attempt 1 of every recipient runs as a local
// activity, all of them side by side inside the event's first workflow
// task, so an event whose receivers answer at once completes in that one
// task: no activity task to schedule, dispatch and report, no second
// workflow task. Its outcome is a marker in the history.
//
// No retries here (MaximumAttempts 1): a local attempt that returns an
// error (the database away, a secret this worker cannot open, the deadline
// below) hands attempt 1, with the same number, to the regular activity and
// its durable retries (attemptOptions), which find the record if the local
// run wrote one. Local retries would instead hold the workflow task, or
// past its timeout add a timer and a task per retry.
//
// Slow receivers: an attempt takes at most activities.MaxAttemptDuration
// (20 s: connect, TLS, response) plus its two database round trips. That is
// longer than the workflow task timeout (10 s by default); past 80% of it
// the SDK heartbeats the task (completes it, recording the markers of the
// attempts already finished and the timers of their retries, and opens the
// next one), so a slow receiver costs one or two extra workflow tasks and
// never delays the other recipients' requests or records; the timers of
// their retries start when the task completes or heartbeats (at most about
// 8 s late). The start-to-close leaves 10 s beyond the request for the
// database, so the deadline only cuts an attempt that is stuck; one cut
// after its POST was answered would be made again by the regular activity
// (at least once: a duplicate receipt with the same webhook-id, still one
// record). The schedule-to-close adds 10 s for waiting for one of the
// worker's local-activity slots, and it counts from scheduling: an attempt
// that starts with less than a whole request's time left before it gives
// up before sending (activities.ErrLocalAttemptLate), and the regular
// activity makes it, so a deadline never cuts a request it let start.
//
// A worker lost during the local attempt: the workflow task times out and
// is retried on another worker, which runs the local attempt again. Attempt
// 1 is made again if its record was not written (at least once, same
// webhook-id), and there is still exactly one record: AttemptDelivery
// returns a record already written, and of two runs racing the insert's
// ON CONFLICT keeps the first.
var firstAttemptOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    activities.MaxAttemptDuration + 10*time.Second,
	ScheduleToCloseTimeout: activities.MaxAttemptDuration + 20*time.Second,
	RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
}

// readOptions: a redelivery's run reads the attempts already recorded in
// one short local activity. No workflow of ours gives up because the
// database is away, so its retries are bounded only by a schedule-to-close
// far beyond any outage (for a local activity, an unset schedule-to-close
// means the start-to-close, and a 10-second database blip would fail the
// run).
//
// Past the workflow task timeout each local retry costs a timer and a
// workflow task in the history, so the interval grows to 10 minutes: a
// month of outage then stays near 26,000 events, inside the 51,200 limit.
var readOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    10 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute,
		MaximumAttempts: untilScheduleToClose},
}

// attempt makes one attempt: attempt 1 as a local activity first, then (on
// an error from it, or for every other attempt) as a regular activity.
// summary labels it in the event history (a summary is not part of a
// command's identity, so it changes no replay).
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
		workflow.GetLogger(ctx).Warn("the first delivery attempt could not be made locally; making it as a regular activity",
			"subscriptionId", in.SubscriptionID.String(), "error", err)
		r = activities.AttemptResult{}
	}
	o := attemptOptions
	o.Summary = summary
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), deliveryActs.AttemptDelivery, in).Get(ctx, &r)
	return r, err
}
