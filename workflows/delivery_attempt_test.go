package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// localFails makes the local runs of AttemptDelivery fail with err, after
// running for real when run is set (the attempt made and recorded, then its
// result lost); regular runs are real.
func (f *deliveryFixture) localFails(env *testsuite.TestWorkflowEnvironment, err error, run bool) {
	env.OnActivity(f.Acts.AttemptDelivery, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in *activities.AttemptInput) (*activities.AttemptResult, error) {
			if !activity.GetInfo(ctx).IsLocalActivity {
				return f.Acts.AttemptDelivery(ctx, in)
			}
			if run {
				if _, err := f.Acts.AttemptDelivery(ctx, in); err != nil {
					return nil, err
				}
			}
			return nil, err
		})
}

// The local first attempt fails for an infrastructure reason (the database
// away, a secret this worker cannot open): attempt 1 is made again, with
// the same number, as a regular activity with durable retries, and the
// schedule goes on from there.
func TestDeliveryLocalFirstAttemptFallsBackToAnActivity(t *testing.T) {
	for name, err := range map[string]error{
		"database down":        errDatabaseDown,
		"undecryptable secret": temporal.NewApplicationError("cannot decrypt the subscription's signing secret", activities.ErrUndecryptableSecret),
	} {
		t.Run(name, func(t *testing.T) {
			f := newDeliveryFixture(t)
			rc := newReceiver(t, 500, 200)
			sub, _ := f.Subscribe(t, rc.URL)
			env := f.newEnv()
			seen := watchAttempts(env)
			f.localFails(env, err, false)
			res, took := f.run(t, env, f.publish(t), defaultSchedule)
			if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 2 {
				t.Fatalf("result %+v", got)
			}
			seen.check(t, "local 1", "activity 1", "activity 2")
			checkAttempts(t, f.Records(t, sub.ID), 500, 200)
			if rc.Count() != 2 {
				t.Fatalf("receiver got %d requests, want 2", rc.Count())
			}
			if base := 5 * time.Second; took < base*9/10 || took > base*11/10+time.Second {
				t.Errorf("two attempts took %v of workflow time, want about %v", took, base)
			}
		})
	}
}

// The local attempt is made and recorded, then its result is lost (say its
// deadline passed as it returned): the regular activity making attempt 1
// again finds the record and returns it, sending nothing.
func TestDeliveryLocalAttemptRecordedThenLost(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	env := f.newEnv()
	seen := watchAttempts(env)
	f.localFails(env, errors.New("the local attempt's result was lost"), true)
	res, _ := f.run(t, env, f.publish(t), defaultSchedule)
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 1 {
		t.Fatalf("result %+v", got)
	}
	seen.check(t, "local 1", "activity 1")
	checkAttempts(t, f.Records(t, sub.ID), 200)
	if rc.Count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.Count())
	}
}
