package webhooks_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/temporalcost"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// deliverAndCount publishes one event to n subscriptions whose receivers
// answer 200 at once, waits for its workflow and returns what its history
// cost.
func deliverAndCount(t *testing.T, env *testenv.Env, n int, typ string) temporalcost.Cost {
	t.Helper()
	var rcs []*receiver
	for range n {
		rc := newReceiver(t, http.StatusOK)
		subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{typ}})
		rcs = append(rcs, rc)
	}
	ev := publish(t, env, typ, map[string]any{"cost": n})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	if len(res.Subscriptions) != n {
		t.Fatalf("result %+v", res)
	}
	for _, s := range res.Subscriptions {
		if s.Outcome != workflows.OutcomeDelivered || s.Attempts != 1 {
			t.Fatalf("result %+v", res)
		}
	}
	for _, rc := range rcs {
		if got := rc.count(); got != 1 {
			t.Fatalf("a receiver got %d requests, want 1", got)
		}
	}
	return temporalcost.Of(env.History(t, workflows.DeliveryWorkflowID(ev.ID)).GetEvents())
}

// An event delivered on the first attempt costs one workflow task and no
// activity task: every recipient's attempt is a local activity of that
// task. Issue 10's targets: at most 2 billable actions with one
// subscription, at most 0.3 per delivery (3) with ten. Issue 11's Outcome
// search attribute adds one upsert per event, a billable action: 3 with
// one subscription (start, the local attempts, the upsert), still 3 with
// ten. Before attempt 1
// was local (measured with this test): one subscription took 13 events, 2
// workflow tasks and an activity task (2 actions); ten took 55 events, 7
// workflow tasks and 10 activity tasks (11 actions).
func TestDeliveryTemporalCost(t *testing.T) {
	env := testenv.Start(t)
	for _, c := range []struct {
		subs       int
		typ        string
		maxActions int
	}{{1, "test.created", 3}, {10, "test.updated", 3}} {
		t.Run(fmt.Sprintf("subscriptions=%d", c.subs), func(t *testing.T) {
			cost := deliverAndCount(t, env, c.subs, c.typ)
			t.Logf("%d subscription(s): %v", c.subs, cost)
			if cost.WorkflowTasks != 1 || cost.ActivityTasks != 0 || cost.LocalResults != c.subs {
				t.Errorf("want one workflow task, no activity task and %d local results", c.subs)
			}
			if cost.Actions > c.maxActions {
				t.Errorf("%d billable actions, want at most %d", cost.Actions, c.maxActions)
			}
		})
	}
}

// A receiver slower than the workflow task timeout's heartbeat point (80%
// of 10 s): the SDK keeps the task alive while the local attempt runs, the
// event is delivered once, recorded once, and no regular activity runs.
func TestDeliverySlowReceiverStaysLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 9 s")
	}
	t.Parallel()
	env := testenv.Start(t)
	rc := &receiver{statuses: []int{http.StatusOK}, notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(9 * time.Second)
		rc.serve(w, r)
	}))
	t.Cleanup(rc.Close)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.deleted"}})
	ev := publish(t, env, "test.deleted", map[string]any{"slow": true})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered || res.Subscriptions[0].Attempts != 1 {
		t.Fatalf("result %+v", res)
	}
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.count())
	}
	if got := records(t, env, hook, 1); len(got) != 1 {
		t.Fatalf("%d records, want 1", len(got))
	}
	cost := temporalcost.Of(env.History(t, workflows.DeliveryWorkflowID(ev.ID)).GetEvents())
	t.Logf("a 9 s receiver: %v", cost)
	if cost.ActivityTasks != 0 || cost.LocalResults != 1 || cost.WorkflowTasks < 2 {
		t.Errorf("want the local attempt kept alive by workflow task heartbeats, no activity task")
	}
}
