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
