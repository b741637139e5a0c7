package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// DeadlineTimerStepsPerRun bounds the activity runs (one per wake-up, at a
// deadline or a signal) of one run of a deadline timer; the workflow then
// continues as new, so its history stays short (about ten events per step)
// however often its subject is rotated.
const DeadlineTimerStepsPerRun = 100

// Outcomes every deadline timer can end with; a subject's activity may
// report others (activities.DeadlineResult.Final).
const (
	deadlineOutcomeDeleted = "deleted" // the subject is gone
	deadlineOutcomeIdle    = "idle"    // no deadline left; the subject's next change starts a new run
)

// recheckDelay is the wait before applying a deadline again when the
// activity found it not yet due: the worker's clock may trail the server's.
const recheckDelay = time.Second

// deadlineSubject is what a deadline timer watches, as its workflow
// (APIKey, WebhookSecret) describes it.
type deadlineSubject struct {
	// details is the run's current details: the summary line given at
	// start, which a continued run would not show otherwise.
	details string
	// signal is the name of the signal that makes the timer look again.
	signal string
	// activity applies what is due and returns *activities.DeadlineResult;
	// activityInput is its input and activitySummary its Web UI summary.
	activity        any
	activityInput   any
	activitySummary string
	// workflow and input are what a continued run starts from.
	workflow any
	input    any
}

// deadlineTimer moves a subject's stored state at its deadlines: it runs
// the subject's activity, which applies what is due and reads the next
// deadline back, and sleeps until that deadline or the next signal. It
// returns the outcome it ended with, or a continue-as-new error.
//
// The database is the truth and a signal carries nothing but a wake-up:
// whatever its payload says, the next read tells what happened (a
// revocation ends the run at the read after its signal). So signals from
// several API processes may arrive in any order, and a read after the
// last one is always right. The signals delivered with the start
// (signal-with-start) are what the first read sees already, so they are
// taken before it and wake nothing.
//
// Each run sets its current details to the start's summary line: the
// summary itself is given at start only (ContinueAsNewErrorOptions has no
// summary in SDK 1.50), while the current details, served by the metadata
// query the Web UI shows on a workflow's page, carry it on every run.
// Setting them issues no command and records no event.
func deadlineTimer(ctx workflow.Context, s deadlineSubject) (outcome string, err error) {
	workflow.SetCurrentDetails(ctx, s.details)
	t := &deadlineRun{ctx: ctx, s: s, signals: workflow.GetSignalChannel(ctx, s.signal)}
	t.drain()
	for {
		res, err := t.apply()
		if err != nil {
			return "", err
		}
		switch {
		case !res.Found:
			return deadlineOutcomeDeleted, nil
		case res.Final != "":
			return res.Final, nil
		case res.Next == nil && !t.drain():
			// Nothing left to wait for. A signal the drain takes came
			// after the read, and its change may have set a deadline: the
			// loop then looks again rather than end and miss it.
			return deadlineOutcomeIdle, nil
		case t.steps >= DeadlineTimerStepsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested():
			// The new run reads the subject first, so the signals taken
			// here lose nothing.
			t.drain()
			return "", workflow.NewContinueAsNewError(ctx, s.workflow, s.input)
		case res.Next != nil:
			t.wait(*res.Next, res.NextSummary)
		}
	}
}

type deadlineRun struct {
	ctx     workflow.Context
	s       deadlineSubject
	signals workflow.ReceiveChannel
	steps   int
}

// apply runs the subject's activity.
func (t *deadlineRun) apply() (*activities.DeadlineResult, error) {
	t.steps++
	ctx := workflow.WithActivityOptions(t.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		// Retries until the database answers (up to OutageTolerance); each
		// attempt is idempotent. Meanwhile only the stored state lags:
		// authentication and deliveries read the deadlines themselves.
		ScheduleToCloseTimeout: OutageTolerance,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    untilScheduleToClose,
		},
		Summary: t.s.activitySummary,
	})
	var res activities.DeadlineResult
	err := workflow.ExecuteActivity(ctx, t.s.activity, t.s.activityInput).Get(ctx, &res)
	return &res, err
}

// wait sleeps until deadline or the next signal, whichever comes first.
func (t *deadlineRun) wait(deadline time.Time, summary string) {
	if t.drain() {
		return // signalled during the activity: no timer to start and cancel
	}
	d := deadline.Sub(workflow.Now(t.ctx))
	if d <= 0 {
		d = recheckDelay
	}
	timerCtx, cancel := workflow.WithCancel(t.ctx)
	defer cancel()
	timer := workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: summary})
	sel := workflow.NewSelector(t.ctx)
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddReceive(t.signals, func(c workflow.ReceiveChannel, _ bool) { c.Receive(t.ctx, nil) })
	sel.Select(t.ctx)
	// A burst of signals (say, rotations in a loop) costs one read.
	t.drain()
}

// drain takes the signals already delivered without blocking and reports
// whether there were any.
func (t *deadlineRun) drain() (got bool) {
	for t.signals.ReceiveAsync(nil) {
		got = true
	}
	return got
}
