package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// DeadlineTimerStepsPerRun bounds a run's wake-ups (about ten history events
// each); it then continues as new, however often its subject changes.
const DeadlineTimerStepsPerRun = 100

// Outcomes of every deadline timer; a subject's activity may report others.
const (
	deadlineOutcomeDeleted = "deleted" // the subject is gone
	deadlineOutcomeIdle    = "idle"    // no deadline left; the subject's next change starts a new run
)

// recheckDelay allows for a worker's clock trailing the server's.
const recheckDelay = time.Second

// deadlineSubject is what a deadline timer (APIKey, WebhookSecret) watches.
type deadlineSubject struct {
	details string
	// signal wakes the timer.
	signal string
	// activity applies what is due and returns *activities.DeadlineResult.
	activity        any
	activityInput   any
	activitySummary string
	// workflow and input start a continued run.
	workflow any
	input    any
}

// deadlineTimer applies what is due, reads the next deadline and sleeps until
// it or a signal, a mere wake-up: the read after the last signal is right.
// details stand in for the summary a continued run lacks.
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
			// Idle unless a signal came after the read: it may have set a deadline.
			return deadlineOutcomeIdle, nil
		case t.steps >= DeadlineTimerStepsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested():
			// The new run reads the subject first, so drained signals lose nothing.
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

func (t *deadlineRun) apply() (*activities.DeadlineResult, error) {
	t.steps++
	ctx := workflow.WithActivityOptions(t.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		// Idempotent; while the database is away only the stored state lags.
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
	// A burst of signals costs one read.
	t.drain()
}

// drain takes the signals already delivered and reports whether there were any.
func (t *deadlineRun) drain() (got bool) {
	for t.signals.ReceiveAsync(nil) {
		got = true
	}
	return got
}
