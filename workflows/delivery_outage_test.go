package workflows_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// outage is how long, in workflow time, a dependency stays away in these
// tests: far past any single retry, so a call site that gives up early
// fails the test.
const outage = 30 * time.Minute

// errDatabaseDown is what the store returns while PostgreSQL is away.
var errDatabaseDown = fmt.Errorf("store: %w: dial tcp 127.0.0.1:5432: connect: connection refused", models.ErrUnavailable)

// failing wraps an activity so it fails with err until outage has passed
// in workflow time, then runs for real, and counts the calls.
func failing[In, Out any](env interface{ Now() time.Time }, err error, real func(context.Context, In) (Out, error), calls *int) func(context.Context, In) (Out, error) {
	end := env.Now().Add(outage)
	return func(ctx context.Context, in In) (Out, error) {
		*calls++
		if env.Now().Before(end) {
			var zero Out
			return zero, err
		}
		return real(ctx, in)
	}
}

// Recipients fixed at acceptance: a subscription created after the event
// gets nothing, and a disabled one at acceptance is not a recipient even
// if it is enabled before the workflow runs.
func TestDeliveryGoesToTheRecipientsFixedAtAcceptance(t *testing.T) {
	f := newDeliveryFixture(t)
	early, late, reenabled := newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
	subEarly, _ := f.Subscribe(t, early.URL)
	subOff, _ := f.Subscribe(t, reenabled.URL)
	if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, subOff.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	ev := f.publish(t)
	f.Subscribe(t, late.URL)
	if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, subOff.ID, models.WebhookUpdate{Enabled: new(true)}); err != nil {
		t.Fatal(err)
	}
	res, _ := f.run(t, f.newEnv(), ev, defaultSchedule)
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].SubscriptionID != subEarly.ID || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered {
		t.Fatalf("result %+v, want only the subscription enabled at acceptance", res.Subscriptions)
	}
	if early.Count() != 1 || late.Count() != 0 || reenabled.Count() != 0 {
		t.Fatalf("receipts: early %d, late %d, re-enabled %d; want 1, 0, 0", early.Count(), late.Count(), reenabled.Count())
	}
}

// The database away for 30 minutes while attempting, and a worker whose
// WEBHOOK_SECRET_KEY cannot open the secret for as long: each time the
// attempt retries until it can be made, and exactly one record is written.
func TestDeliveryAttemptOutlastsAnOutage(t *testing.T) {
	for name, err := range map[string]error{
		"database down":        errDatabaseDown,
		"undecryptable secret": temporal.NewApplicationError("cannot decrypt the subscription's signing secret", activities.ErrUndecryptableSecret),
	} {
		t.Run(name, func(t *testing.T) {
			f := newDeliveryFixture(t)
			rc := newReceiver(t, 200)
			sub, _ := f.Subscribe(t, rc.URL)
			ev := f.publish(t)
			env := f.newEnv()
			var calls int
			env.OnActivity(f.Acts.AttemptDelivery, mock.Anything, mock.Anything).Return(
				failing(env, err, f.Acts.AttemptDelivery, &calls))
			res, took := f.run(t, env, ev, defaultSchedule)
			if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 1 {
				t.Fatalf("result %+v", got)
			}
			checkAttempts(t, f.Records(t, sub.ID), 200)
			if took < outage || calls < 5 {
				t.Fatalf("delivered after %v and %d calls: the outage was not exercised", took, calls)
			}
		})
	}
}

// The database away for 30 minutes when a key's workflow first applies
// its transitions: it retries until the database answers, then sleeps to
// the expiry and ends there.
func TestAPIKeyWorkflowOutlastsADatabaseOutage(t *testing.T) {
	w := newKeyWorkflow(t, time.Hour)
	real := &activities.Activities{Store: w.st, Now: w.env.Now}
	var calls int
	w.env.OnActivity(real.ApplyAPIKeyTransitions, mock.Anything, mock.Anything).Return(
		failing(w.env, errDatabaseDown, real.ApplyAPIKeyTransitions, &calls))
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeExpired || lived < time.Hour || lived > time.Hour+2*time.Minute {
		t.Fatalf("outcome %q after %v, want expired at the hour", outcome, lived)
	}
	if calls < 5 {
		t.Fatalf("%d calls: the outage was not exercised", calls)
	}
	w.expectStored("after the outage and the expiry", "expired", "")
}

// Retention with the database away for 30 minutes: the purge retries until
// it answers and the run completes.
func TestRetentionOutlastsADatabaseOutage(t *testing.T) {
	f := newDeliveryFixture(t)
	env := f.newEnv()
	var calls int
	env.OnActivity(f.Acts.PurgeExpiredDeliveries, mock.Anything, mock.Anything).Return(
		failing(env, errDatabaseDown, f.Acts.PurgeExpiredDeliveries, &calls))
	env.ExecuteWorkflow(workflows.RetentionWorkflow, &workflows.RetentionInput{Retention: activities.Duration(90 * 24 * time.Hour)})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("retention: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	if calls < 5 {
		t.Fatalf("%d calls: the outage was not exercised", calls)
	}
}

// A retention of zero (an input with none) or less would purge every
// record: the workflow refuses it without purging anything.
func TestRetentionRefusesANonPositiveRetention(t *testing.T) {
	f := newDeliveryFixture(t)
	for _, retention := range []time.Duration{0, -time.Hour} {
		env := f.newEnv()
		var calls int
		env.OnActivity(f.Acts.PurgeExpiredDeliveries, mock.Anything, mock.Anything).Return(
			func(context.Context, *activities.PurgeInput) (*activities.PurgeResult, error) {
				calls++
				return &activities.PurgeResult{}, nil
			})
		env.ExecuteWorkflow(workflows.RetentionWorkflow, &workflows.RetentionInput{Retention: activities.Duration(retention)})
		if !env.IsWorkflowCompleted() || env.GetWorkflowError() == nil || calls != 0 {
			t.Fatalf("retention %v: error %v, %d purges; want an error and none", retention, env.GetWorkflowError(), calls)
		}
	}
}

// Retention must outlast any attempt still waiting out an outage, or it
// would delete the event under it (the attempt would then be skipped with
// no record). The configuration's minimum is derived from this tolerance.
func TestRetentionMarginCoversOutageTolerance(t *testing.T) {
	if config.MinRetentionMargin < workflows.OutageTolerance+24*time.Hour {
		t.Fatalf("config.MinRetentionMargin %v < OutageTolerance %v + a day", config.MinRetentionMargin, workflows.OutageTolerance)
	}
}
