package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// scripted replaces AttemptDelivery (local and regular runs alike) with
// answers given in order, and notes the virtual time and input of each
// call, so the waits can be read off exactly.
type scripted struct {
	mu      sync.Mutex
	env     *testsuite.TestWorkflowEnvironment
	answers []activities.AttemptResult
	calls   []scriptedCall
}

type scriptedCall struct {
	at time.Time
	in activities.AttemptInput
}

func script(env *testsuite.TestWorkflowEnvironment, answers ...activities.AttemptResult) *scripted {
	s := &scripted{env: env, answers: answers}
	env.OnActivity("AttemptDelivery", mock.Anything, mock.Anything).Return(
		func(_ context.Context, in *activities.AttemptInput) (*activities.AttemptResult, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.calls = append(s.calls, scriptedCall{at: env.Now(), in: *in})
			r := s.answers[min(len(s.calls), len(s.answers))-1]
			return &r, nil
		})
	return s
}

func (s *scripted) get() []scriptedCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]scriptedCall(nil), s.calls...)
}

var (
	failed    = activities.AttemptResult{Outcome: activities.AttemptFailed, StatusCode: 500}
	delivered = activities.AttemptResult{Outcome: activities.AttemptDelivered, StatusCode: 200}
)

func throttled(d time.Duration) activities.AttemptResult {
	return activities.AttemptResult{Outcome: activities.AttemptThrottled, RetryAfter: activities.Duration(d)}
}

func tooMany(d time.Duration) activities.AttemptResult {
	return activities.AttemptResult{Outcome: activities.AttemptFailed, StatusCode: 429, RetryAfter: activities.Duration(d)}
}

// A throttled attempt sends and records nothing: the workflow waits the
// activity's RetryAfter and makes the same attempt number again, outside
// the schedule.
func TestDeliveryThrottledAttemptIsMadeAgainWithItsNumber(t *testing.T) {
	f := newDeliveryFixture(t)
	sub, _ := f.Subscribe(t, "https://hooks.example.com/a")
	ev := f.publish(t)
	env := f.newEnv()
	s := script(env, throttled(7*time.Second), throttled(3*time.Second), delivered)
	res, took := f.run(t, env, ev, defaultSchedule)

	calls := s.get()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	for i, c := range calls {
		// Each call says how often the attempt was held back in a row,
		// so the activity can back off.
		if c.in.AttemptNumber != 1 || c.in.SubscriptionID != sub.ID || c.in.Throttled != i {
			t.Errorf("call %d: %+v", i, c.in)
		}
	}
	if d := calls[1].at.Sub(calls[0].at); d < 7*time.Second || d > 8*time.Second {
		t.Errorf("first throttle waited %v, want 7s", d)
	}
	if d := calls[2].at.Sub(calls[1].at); d < 3*time.Second || d > 4*time.Second {
		t.Errorf("second throttle waited %v, want 3s", d)
	}
	if res.Subscriptions[0].Outcome != workflows.OutcomeDelivered || res.Subscriptions[0].Attempts != 1 {
		t.Errorf("result %+v", res.Subscriptions[0])
	}
	if took > 12*time.Second {
		t.Errorf("took %v", took)
	}
}

// A receiver's Retry-After (429 or 503) lengthens the wait before the
// next scheduled attempt to the later of the two, and never past the
// schedule's longest wait.
func TestDeliveryRetryAfterLengthensTheNextWait(t *testing.T) {
	for name, tc := range map[string]struct {
		retryAfter time.Duration
		min, max   time.Duration
	}{
		"longer than the schedule's wait": {30 * time.Second, 30 * time.Second, 31 * time.Second},
		"capped at the longest wait":      {time.Hour, 40 * time.Second, 41 * time.Second},
		"shorter: the schedule wins":      {time.Second, 4500 * time.Millisecond, 5500 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			f := newDeliveryFixture(t)
			f.Subscribe(t, "https://hooks.example.com/a")
			ev := f.publish(t)
			env := f.newEnv()
			s := script(env, tooMany(tc.retryAfter), delivered)
			f.run(t, env, ev, []time.Duration{5 * time.Second, 40 * time.Second})
			calls := s.get()
			if len(calls) != 2 {
				t.Fatalf("%d calls", len(calls))
			}
			if d := calls[1].at.Sub(calls[0].at); d < tc.min || d > tc.max {
				t.Errorf("attempt 2 came %v after attempt 1, want %v to %v", d, tc.min, tc.max)
			}
			in := calls[0].in
			if time.Duration(in.MaxWait) != 40*time.Second || in.Final || in.Manual || time.Duration(in.NextAttemptIn) < 4500*time.Millisecond || time.Duration(in.NextAttemptIn) > 5500*time.Millisecond {
				t.Errorf("attempt 1's input %+v", in)
			}
			if in := calls[1].in; in.Final || time.Duration(in.NextAttemptIn) < 36*time.Second || time.Duration(in.NextAttemptIn) > 44*time.Second {
				t.Errorf("attempt 2 (a third is scheduled 40 s later): %+v", in)
			}
		})
	}
}
