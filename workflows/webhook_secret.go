package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// WebhookSecretStepsPerRun bounds the wake-ups (grace-period ends and
// signals) of one run; the workflow then continues as new, so its history
// stays short however often a secret is rotated.
const WebhookSecretStepsPerRun = 100

// Outcomes of a WebhookSecret run.
const (
	WebhookSecretOutcomeIdle    = "idle"    // no grace period left; the next rotation starts a new run
	WebhookSecretOutcomeDeleted = "deleted" // the subscription is gone
)

// WebhookSecretInput identifies the subscription. It holds no state: each
// run starts by reading the subscription, so continue-as-new needs to
// carry nothing.
type WebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// WebhookSecretResult says why the workflow ended.
type WebhookSecretResult struct {
	Outcome string `json:"outcome"`
}

// WebhookSecret ends a signing-secret rotation's grace period: it sleeps
// until the previous secret expires, then erases it in an activity, and
// ends once no grace period is left. Each rotation signals it
// (WebhookSecretRotatedSignal), which wakes it to re-read the expiry: a
// later rotation replaces the previous secret and its expiry, earlier or
// later than the one the workflow slept towards.
//
// The timer is bookkeeping, not the guarantee: deliveries stop signing
// with the old secret at its expiry, by the database's clock, whether or
// not this workflow has run (store.AttemptState), and the worker's daily
// retention sweep erases expired secrets a missed workflow left behind.
func WebhookSecret(ctx workflow.Context, in *WebhookSecretInput) (*WebhookSecretResult, error) {
	workflow.SetCurrentDetails(ctx, webhookSecretSummary(in.WorkspaceID, in.SubscriptionID))
	signals := workflow.GetSignalChannel(ctx, WebhookSecretRotatedSignal)
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		// Retries until the database answers (up to OutageTolerance); each
		// attempt is idempotent. Meanwhile deliveries are unaffected.
		ScheduleToCloseTimeout: OutageTolerance,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    untilScheduleToClose,
		},
		Summary: "erase the previous secret if expired",
	})
	// The rotations delivered with the start (signal-with-start) are what
	// the first read below sees already: waking for them again would only
	// read the same expiry twice.
	drainRotations(signals)
	for steps := 1; ; steps++ {
		var res activities.ClearPreviousWebhookSecretResult
		err := workflow.ExecuteActivity(actx, deliveryActs.ClearPreviousWebhookSecret,
			&activities.ClearPreviousWebhookSecretInput{WorkspaceID: in.WorkspaceID, SubscriptionID: in.SubscriptionID}).Get(ctx, &res)
		if err != nil {
			return nil, err
		}
		switch {
		case !res.Found:
			return &WebhookSecretResult{Outcome: WebhookSecretOutcomeDeleted}, nil
		case res.PreviousSecretExpiresAt == nil:
			// A rotation signalled meanwhile may have started a grace
			// period: look again rather than end and miss it.
			if drainRotations(signals) {
				continue
			}
			return &WebhookSecretResult{Outcome: WebhookSecretOutcomeIdle}, nil
		case steps >= WebhookSecretStepsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested():
			// The new run re-reads the expiry, so the signals taken here
			// lose nothing.
			drainRotations(signals)
			return nil, workflow.NewContinueAsNewError(ctx, WebhookSecret, in)
		}
		waitForSecretExpiry(ctx, signals, *res.PreviousSecretExpiresAt)
	}
}

// waitForSecretExpiry sleeps until the grace period's end or the next rotation's
// signal, whichever comes first.
func waitForSecretExpiry(ctx workflow.Context, signals workflow.ReceiveChannel, at time.Time) {
	d := at.Sub(workflow.Now(ctx))
	if d <= 0 {
		// Due, but the activity did not find it so: the worker's clock may
		// trail the database's.
		d = recheckDelay
	}
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: "end of grace period"})
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddReceive(signals, func(c workflow.ReceiveChannel, _ bool) {
		var r WebhookSecretRotation
		c.Receive(ctx, &r)
	})
	sel.Select(ctx)
	// A burst of rotations costs one re-read.
	drainRotations(signals)
}

// drainRotations takes the rotations already delivered without blocking and
// reports whether there were any.
func drainRotations(signals workflow.ReceiveChannel) (got bool) {
	for {
		var r WebhookSecretRotation
		if !signals.ReceiveAsync(&r) {
			return got
		}
		got = true
	}
}
