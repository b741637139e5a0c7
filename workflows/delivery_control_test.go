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
// call, so version 4's waits can be read off exactly.
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
	return activities.AttemptResult{Outcome: activities.AttemptThrottled, RetryAfter: d}
}

func tooMany(d time.Duration) activities.AttemptResult {
	return activities.AttemptResult{Outcome: activities.AttemptFailed, StatusCode: 429, RetryAfter: d}
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
			if in.MaxWait != 40*time.Second || in.Final || in.Manual || in.NextAttemptIn < 4500*time.Millisecond || in.NextAttemptIn > 5500*time.Millisecond {
				t.Errorf("attempt 1's input %+v", in)
			}
			if in := calls[1].in; in.Final || in.NextAttemptIn < 36*time.Second || in.NextAttemptIn > 44*time.Second {
				t.Errorf("attempt 2 (a third is scheduled 40 s later): %+v", in)
			}
		})
	}
}

// A redelivery during a wait is made at once, numbered next; the
// scheduled attempt still follows when the wait ends.
func TestDeliveryRedeliveryDuringAWait(t *testing.T) {
	f := newDeliveryFixture(t)
	sub, _ := f.Subscribe(t, "https://hooks.example.com/a")
	ev := f.publish(t)
	env := f.newEnv()
	s := script(env, failed, failed, delivered)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID, RequestID: "test"})
	}, 10*time.Second)
	res, _ := f.run(t, env, ev, []time.Duration{time.Minute, time.Hour})

	calls := s.get()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	start := calls[0].at
	want := []struct {
		n        int
		manual   bool
		from, to time.Duration
	}{
		{1, false, 0, time.Second},
		{2, true, 10 * time.Second, 11 * time.Second},
		{3, false, 54 * time.Second, 67 * time.Second}, // the minute's wait, ±10%
	}
	for i, w := range want {
		c := calls[i]
		at := c.at.Sub(start)
		if c.in.AttemptNumber != w.n || c.in.Manual != w.manual || at < w.from || at > w.to {
			t.Errorf("call %d: attempt %d manual %v at %v, want attempt %d manual %v at %v to %v", i, c.in.AttemptNumber, c.in.Manual, at, w.n, w.manual, w.from, w.to)
		}
	}
	// The redelivery's failure leaves the scheduled attempt due when the
	// wait ends, not a new wait.
	if next := calls[1].in.NextAttemptIn; next < 43*time.Second || next > 57*time.Second {
		t.Errorf("redelivery's NextAttemptIn %v, want the rest of the minute", next)
	}
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 3 {
		t.Errorf("result %+v", got)
	}
}

// A redelivery once the schedule is over (the run still open for another
// recipient) is one more attempt, numbered after the last.
func TestDeliveryRedeliveryAfterExhaustion(t *testing.T) {
	f := newDeliveryFixture(t)
	sub, _ := f.Subscribe(t, "https://hooks.example.com/a")
	ev := f.publish(t)
	env := f.newEnv()
	s := script(env, failed, failed, delivered)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID})
	}, 0)
	// The signal lands at once; hold it until the schedule is over by
	// making the wait short and sending a second signal later instead.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID})
	}, 5*time.Second)
	res, _ := f.run(t, env, ev, []time.Duration{10 * time.Second})
	calls := s.get()
	var numbers []int
	for _, c := range calls {
		numbers = append(numbers, c.in.AttemptNumber)
	}
	// attempt 1 (scheduled, fails), 2 (redelivery at 0 s... made at once,
	// fails), 3 (redelivery at 5 s, delivered): the scheduled attempt at
	// 10 s is not made, since the subscription got the event.
	if len(numbers) != 3 || numbers[0] != 1 || numbers[1] != 2 || numbers[2] != 3 {
		t.Fatalf("attempt numbers %v", numbers)
	}
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 3 {
		t.Errorf("result %+v", got)
	}
}

// A run started by a redelivery after the event's runs closed reads the
// attempts recorded and numbers its attempt after them.
func TestDeliveryRedeliveryRunContinuesTheNumbers(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 500, 500, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.publish(t)
	env := f.newEnv()
	res, _ := f.run(t, env, ev, []time.Duration{time.Second})
	if res.Subscriptions[0].Outcome != workflows.OutcomeExhausted {
		t.Fatalf("first run %+v", res)
	}

	env = f.newEnv()
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID, RequestID: "api"})
	}, 0)
	res, _ = f.runInput(t, env, &workflows.DeliveryInput{EventID: ev.ID, Redelivery: true})
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered || res.Subscriptions[0].Attempts != 3 {
		t.Fatalf("redelivery run %+v", res)
	}
	checkAttempts(t, f.Records(t, sub.ID), 500, 500, 200)
}
