package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/workflows"
)

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
	if next := time.Duration(calls[1].in.NextAttemptIn); next < 43*time.Second || next > 57*time.Second {
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

// Redeliveries that name their attempt (a recovery's) are made once each:
// during a wait, two signals for attempt 2 make one attempt 2, a signal
// for attempt 1 (made already) is dropped, and so is a third signal for
// attempt 2 sent while attempt 2 is under way; the scheduled attempt 3
// follows when the wait ends.
func TestDeliveryRedeliveryOfANamedAttemptIsMadeOnce(t *testing.T) {
	f := newDeliveryFixture(t)
	sub, _ := f.Subscribe(t, "https://hooks.example.com/a")
	ev := f.publish(t)
	env := f.newEnv()
	var mu sync.Mutex
	var calls []activities.AttemptInput
	redeliver := func(attempt int) {
		env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID, RequestID: "recover:test", Attempt: attempt})
	}
	env.OnActivity("AttemptDelivery", mock.Anything, mock.Anything).Return(
		func(_ context.Context, in *activities.AttemptInput) (*activities.AttemptResult, error) {
			mu.Lock()
			calls = append(calls, *in)
			mu.Unlock()
			if in.Manual && len(calls) == 2 {
				redeliver(in.AttemptNumber) // the same page's signal again, its attempt under way
			}
			if in.AttemptNumber == 3 {
				return &delivered, nil
			}
			return &failed, nil
		})
	env.RegisterDelayedCallback(func() {
		redeliver(2)
		redeliver(2)
		redeliver(1)
	}, 10*time.Second)
	res, _ := f.run(t, env, ev, []time.Duration{time.Minute})

	mu.Lock()
	defer mu.Unlock()
	want := []struct {
		n      int
		manual bool
	}{{1, false}, {2, true}, {3, false}}
	if len(calls) != len(want) {
		t.Fatalf("%d attempts %+v, want 3: 1, the redelivery's 2, the scheduled 3", len(calls), calls)
	}
	for i, w := range want {
		if calls[i].AttemptNumber != w.n || calls[i].Manual != w.manual {
			t.Errorf("call %d: attempt %d manual %v, want %d manual %v", i, calls[i].AttemptNumber, calls[i].Manual, w.n, w.manual)
		}
	}
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 3 {
		t.Errorf("result %+v", got)
	}
}

// A run of a closed event started by redeliveries compares their attempts
// with the attempts made once it has read them: two signals for attempt 3
// make one, one for attempt 2 (made) is dropped, and one naming none (the
// API's) is one more attempt whatever was made.
func TestDeliveryRedeliveryRunDropsAttemptsMade(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 500, 500, 500, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.publish(t)
	env := f.newEnv()
	if res, _ := f.run(t, env, ev, []time.Duration{time.Second}); res.Subscriptions[0].Outcome != workflows.OutcomeExhausted {
		t.Fatalf("first run %+v", res)
	}

	env = f.newEnv()
	env.RegisterDelayedCallback(func() {
		for _, attempt := range []int{3, 3, 2, 0} {
			env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID, Attempt: attempt})
		}
	}, 0)
	res, _ := f.runInput(t, env, &workflows.DeliveryInput{EventID: ev.ID, Redelivery: true})
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].Attempts != 4 {
		t.Fatalf("redelivery run %+v, want attempts 3 and 4", res)
	}
	checkAttempts(t, f.Records(t, sub.ID), 500, 500, 500, 200)
	if n := rc.Count(); n != 4 {
		t.Fatalf("receiver got %d requests, want 4", n)
	}
}

// A redelivery signalled twice under one ID (a client's retry of the same
// Idempotency-Key that ran while the first was still signalling) is made
// once; another ID is another redelivery.
func TestDeliveryRedeliveryOfOneRequestIsMadeOnce(t *testing.T) {
	f := newDeliveryFixture(t)
	sub, _ := f.Subscribe(t, "https://hooks.example.com/a")
	ev := f.publish(t)
	env := f.newEnv()
	s := script(env, failed, failed, failed, delivered)
	for _, at := range []struct {
		after time.Duration
		id    string
	}{{10 * time.Second, "idem:a"}, {11 * time.Second, "idem:a"}, {20 * time.Second, "idem:b"}} {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(workflows.RedeliverSignal, workflows.Redelivery{SubscriptionID: sub.ID, RequestID: "test", ID: at.id})
		}, at.after)
	}
	f.run(t, env, ev, []time.Duration{time.Hour})
	var manual int
	for _, c := range s.get() {
		if c.in.Manual {
			manual++
		}
	}
	if manual != 2 {
		t.Fatalf("%d redeliveries made for two requests (one signalled twice), want 2", manual)
	}
}
