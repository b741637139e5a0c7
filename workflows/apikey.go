package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// APIKeyStepsPerRun bounds the wake-ups (deadlines and signals) of one run;
// the workflow then continues as new, so its history stays short (about ten
// events per step) however often a key is rotated.
const APIKeyStepsPerRun = 100

// Outcomes of an APIKey run.
const (
	APIKeyOutcomeExpired = "expired" // the key expired: nothing more can happen to it
	APIKeyOutcomeRevoked = "revoked"
	APIKeyOutcomeDeleted = "deleted" // the row is gone (its workspace was deleted)
	APIKeyOutcomeIdle    = "idle"    // no deadline left; a later rotation starts a new run
)

// APIKeyInput identifies the key. It holds no state: each run starts by
// reading the key, so continue-as-new needs to carry nothing.
type APIKeyInput struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	KeyID       uuid.UUID `json:"keyId"`
}

// APIKeyResult says why the workflow ended.
type APIKeyResult struct {
	Outcome string `json:"outcome"`
}

// APIKey moves a key's stored state at its deadlines: it sleeps until the
// end of a grace period or the expiry, whichever comes first, then applies
// what is due in an activity. A signal (sent by the API after a rotation or
// revocation) wakes it early to re-read the key. It ends when the key has
// expired, was revoked or has no deadline left.
//
// Each run sets its current details to the start's summary line. The
// summary itself is given at start only (ContinueAsNewErrorOptions has no
// summary in SDK 1.50), so a continued run would show none; the current
// details, served by the metadata query the Web UI shows on a workflow's
// page, carry it on every run. Setting them issues no command and records
// no event, so it changes no replay and needs no version marker.
func APIKey(ctx workflow.Context, in *APIKeyInput) (*APIKeyResult, error) {
	workflow.SetCurrentDetails(ctx, apiKeySummary(in.WorkspaceID, in.KeyID))
	l := &apiKeyLifecycle{
		ctx:     ctx,
		in:      in,
		signals: workflow.GetSignalChannel(ctx, APIKeyChangedSignal),
	}
	return l.run()
}

type apiKeyLifecycle struct {
	ctx     workflow.Context
	in      *APIKeyInput
	signals workflow.ReceiveChannel
	steps   int
}

// recheckDelay is the wait before applying a deadline again when the
// activity found it not yet due: the worker's clock may trail the server's.
const recheckDelay = time.Second

func (l *apiKeyLifecycle) run() (*APIKeyResult, error) {
	for {
		res, err := l.applyTransitions()
		if err != nil {
			return nil, err
		}
		switch {
		case !res.Found:
			return &APIKeyResult{Outcome: APIKeyOutcomeDeleted}, nil
		case res.Revoked:
			return &APIKeyResult{Outcome: APIKeyOutcomeRevoked}, nil
		case res.Status == models.KeyExpired:
			return &APIKeyResult{Outcome: APIKeyOutcomeExpired}, nil
		}
		next := res.NextDeadline()
		if next == nil || l.steps >= APIKeyStepsPerRun || workflow.GetInfo(l.ctx).GetContinueAsNewSuggested() {
			// Signals already delivered must not be lost with this run.
			got, revoked := l.drain()
			switch {
			case revoked:
				return &APIKeyResult{Outcome: APIKeyOutcomeRevoked}, nil
			case next != nil:
				return nil, workflow.NewContinueAsNewError(l.ctx, APIKey, l.in)
			case got:
				continue // a rotation may have scheduled something: look again
			default:
				return &APIKeyResult{Outcome: APIKeyOutcomeIdle}, nil
			}
		}
		if l.wait(*next, res.PreviousKeyExpiresAt != nil && res.PreviousKeyExpiresAt.Equal(*next)) {
			return &APIKeyResult{Outcome: APIKeyOutcomeRevoked}, nil
		}
	}
}

// applyTransitions runs the activity that applies what is due and reads the
// key's schedule back.
func (l *apiKeyLifecycle) applyTransitions() (*activities.ApplyAPIKeyTransitionsResult, error) {
	l.steps++
	ctx := workflow.WithActivityOptions(l.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		// Retries until the database answers (up to OutageTolerance), and
		// each attempt is idempotent. Meanwhile authentication is
		// unaffected; only the stored status lags.
		ScheduleToCloseTimeout: OutageTolerance,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    untilScheduleToClose,
		},
		Summary: "apply due transitions",
	})
	var a *activities.Activities
	var res activities.ApplyAPIKeyTransitionsResult
	in := &activities.ApplyAPIKeyTransitionsInput{WorkspaceID: l.in.WorkspaceID, KeyID: l.in.KeyID}
	err := workflow.ExecuteActivity(ctx, a.ApplyAPIKeyTransitions, in).Get(ctx, &res)
	return &res, err
}

// wait sleeps until deadline or the next signal, and reports whether the
// key was revoked meanwhile.
func (l *apiKeyLifecycle) wait(deadline time.Time, graceEnd bool) (revoked bool) {
	d := deadline.Sub(workflow.Now(l.ctx))
	if d <= 0 {
		d = recheckDelay
	}
	summary := "key expiry"
	if graceEnd {
		summary = "end of grace period"
	}
	timerCtx, cancel := workflow.WithCancel(l.ctx)
	defer cancel()
	timer := workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: summary})
	sel := workflow.NewSelector(l.ctx)
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.AddReceive(l.signals, func(c workflow.ReceiveChannel, _ bool) {
		var ch APIKeyChange
		c.Receive(l.ctx, &ch)
		revoked = ch.Reason == APIKeyRevoked
	})
	sel.Select(l.ctx)
	// A burst of signals (say, rotations in a loop) costs one re-read.
	_, alsoRevoked := l.drain()
	return revoked || alsoRevoked
}

// drain takes the signals already delivered without blocking.
func (l *apiKeyLifecycle) drain() (got, revoked bool) {
	for {
		var ch APIKeyChange
		if !l.signals.ReceiveAsync(&ch) {
			return got, revoked
		}
		got = true
		revoked = revoked || ch.Reason == APIKeyRevoked
	}
}
