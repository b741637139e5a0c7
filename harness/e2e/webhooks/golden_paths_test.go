package webhooks_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/temporalcost"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// The golden histories of the delivery paths that delivery.json and the
// redelivery goldens do not take: each test below runs one path end to
// end, checks that its history holds that path, replays it, and with
// RECORD_HISTORIES=1 saves it under workflows/testdata/0.2.0, which
// TestWorkflowsReplayGoldenHistories replays on every test run. Record them
// alone, e.g.
// RECORD_HISTORIES=1 go test -count=1 -run 'TestDelivery(Throttled|RetryAfter|FanOut|Cancelled|Disabled)GoldenHistory' ./harness/e2e/webhooks

func recordDelivery(t *testing.T, h *historypb.History, file string) {
	t.Helper()
	testenv.RecordGolden(t, h, file,
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
}

// A first attempt its subscription's rate limit (rateLimitPerSecond 1)
// holds back: the local attempt comes back throttled, sending and
// recording nothing, the workflow waits on a "throttled" timer and makes
// attempt 1 again, locally, in a later task (delivery_throttled.json).
// Three events published at once: at least one is throttled.
func TestDeliveryThrottledGoldenHistory(t *testing.T) {
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}, "rateLimitPerSecond": 1})
	var ids []uuid.UUID
	for i := range 3 {
		ids = append(ids, publish(t, env, "test.created", map[string]any{"golden": "throttled", "n": i}).ID)
	}
	for _, id := range ids {
		var res workflows.DeliveryResult
		awaitDelivery(t, env, id, time.Minute, &res)
		if s := res.Subscriptions; len(s) != 1 || s[0].SubscriptionID != hook.ID || s[0].Outcome != workflows.OutcomeDelivered || s[0].Attempts != 1 {
			t.Fatalf("event %s: result %+v, want delivered at attempt 1", id, res)
		}
	}
	for _, id := range ids {
		h := env.History(t, workflows.DeliveryWorkflowID(id))
		if !slices.ContainsFunc(summariesOf(t, h), func(s string) bool { return strings.HasPrefix(s, "throttled: wait for attempt 1") }) {
			continue
		}
		// Both runs of attempt 1 are local: a throttled attempt keeps its number.
		if c := temporalcost.Of(h.GetEvents()); c.LocalResults < 2 || c.ActivityTasks != 0 {
			t.Fatalf("want attempt 1 local before and after its throttle: %v", c)
		}
		recordDelivery(t, h, "delivery_throttled.json")
		return
	}
	t.Fatalf("none of %d events at 1 per second was throttled", len(ids))
}

// A receiver's 429 with Retry-After: 3 lengthens the wait before attempt 2
// from the schedule's 1 s to 3 s (within the schedule's longest wait, 5 s),
// and attempt 2 is delivered (delivery_retry_after.json).
func TestDeliveryRetryAfterGoldenHistory(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second, 5 * time.Second} })
	rc := newPressingReceiver(t, func(w http.ResponseWriter, nth int) {
		if nth == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	subscribePressing(t, env, rc, nil)
	ev := publish(t, env, "test.created", map[string]any{"golden": "retry-after"})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	rc.check(t)
	if s := res.Subscriptions; len(s) != 1 || s[0].Outcome != workflows.OutcomeDelivered || s[0].Attempts != 2 {
		t.Fatalf("result %+v, want delivered at attempt 2", res)
	}
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	if got := timerWaits(h); !slices.Equal(got, []time.Duration{3 * time.Second}) {
		t.Fatalf("timers of %v, want one, the wait for attempt 2 of 3s, the Retry-After", got)
	}
	recordDelivery(t, h, "delivery_retry_after.json")
}

// One event to four recipients, each in its own coroutine: one answers 200
// at once, one 500 then 200, one 500 then 410, one 500 to all three
// attempts; every first attempt is local, the four retries are activities
// interleaved across the workflow's tasks, and the event ends "exhausted",
// its worst recipient's outcome (delivery_fanout.json).
func TestDeliveryFanOutGoldenHistory(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second, time.Second} })
	want := map[uuid.UUID]workflows.SubscriptionDelivery{}
	for _, r := range []struct {
		statuses []int
		outcome  workflows.Outcome
		attempts int
	}{
		{[]int{http.StatusOK}, workflows.OutcomeDelivered, 1},
		{[]int{http.StatusInternalServerError, http.StatusOK}, workflows.OutcomeDelivered, 2},
		{[]int{http.StatusInternalServerError, http.StatusGone}, workflows.OutcomeGone, 2},
		{[]int{http.StatusInternalServerError}, workflows.OutcomeExhausted, 3},
	} {
		rc := newReceiver(t, r.statuses...)
		hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.updated"}})
		want[hook.ID] = workflows.SubscriptionDelivery{SubscriptionID: hook.ID, Outcome: r.outcome, Attempts: r.attempts}
	}
	ev := publish(t, env, "test.updated", map[string]any{"golden": "fan-out"})
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, time.Minute, &res)
	if len(res.Subscriptions) != len(want) || res.Outcome != workflows.OutcomeExhausted {
		t.Fatalf("result %+v, want %d recipients and the event exhausted", res, len(want))
	}
	for _, s := range res.Subscriptions {
		if s != want[s.SubscriptionID] {
			t.Errorf("recipient %+v, want %+v", s, want[s.SubscriptionID])
		}
	}
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	if c := temporalcost.Of(h.GetEvents()); c.LocalResults != 4 || c.ActivityTasks != 4 {
		t.Fatalf("want four local first attempts and four retries as activities: %v", c)
	}
	if got := upsertedOutcomes(t, h); !slices.Equal(got, []string{"exhausted"}) {
		t.Fatalf("Outcome upserts %v, want one, exhausted", got)
	}
	recordDelivery(t, h, "delivery_fanout.json")
}

// A delivery cancelled (an operator's cancel in the Web UI or the CLI)
// while it waits an hour for attempt 2: the wait's timer is cancelled, and
// the run upserts its Outcome, "error", and completes
// (delivery_cancelled.json).
// Nothing in the service cancels a delivery; a terminated one runs no
// workflow code, so it has no golden history.
func TestDeliveryCancelledGoldenHistory(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} })
	rc := newReceiver(t, http.StatusInternalServerError)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"golden": "cancelled"})
	awaitAttempts(t, env, hook.ID, ev.ID, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := env.Temporal.CancelWorkflow(ctx, workflows.DeliveryWorkflowID(ev.ID), ""); err != nil {
		t.Fatal(err)
	}
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, 30*time.Second, &res)
	if s := res.Subscriptions; len(s) != 1 || s[0].Attempts != 1 {
		t.Fatalf("result %+v, want one recipient with attempt 1 made", res)
	}
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	for _, typ := range []enumspb.EventType{enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED, enumspb.EVENT_TYPE_TIMER_CANCELED} {
		if !slices.ContainsFunc(h.GetEvents(), func(e *historypb.HistoryEvent) bool { return e.GetEventType() == typ }) {
			t.Fatalf("no %v in the history", typ)
		}
	}
	// The recipient still at work when cancelled ends in "error" (behind
	// the cancelled-outcome version marker; before it, its last attempt's
	// "exhausted": delivery_cancelled_unversioned.json).
	if res.Outcome != workflows.OutcomeError || res.Subscriptions[0].Outcome != workflows.OutcomeError {
		t.Fatalf("result %+v, want the recipient and the event in error", res)
	}
	if got := upsertedOutcomes(t, h); !slices.Equal(got, []string{string(workflows.OutcomeError)}) {
		t.Fatalf("Outcome upserts %v, want one, error", got)
	}
	t.Logf("cancelled delivery's result: %+v", res)
	recordDelivery(t, h, "delivery_cancelled.json")
}

// A subscription disabled while its delivery waits for attempt 2: attempt
// 2's activity finds it disabled, sends and records nothing, and the run
// ends "skipped" (delivery_disabled.json). A deleted subscription takes
// the same branch of the workflow.
func TestDeliveryDisabledGoldenHistory(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{3 * time.Second} })
	rc := newReceiver(t, http.StatusInternalServerError)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"golden": "disabled"})
	awaitAttempts(t, env, hook.ID, ev.ID, 1)
	env.DoJSON(t, http.MethodPut, wsPath(env, "/webhooks/"+hook.ID.String()), env.AdminKey, map[string]any{"enabled": false}, http.StatusOK, nil)
	var res workflows.DeliveryResult
	awaitDelivery(t, env, ev.ID, 30*time.Second, &res)
	if s := res.Subscriptions; len(s) != 1 || s[0].Outcome != workflows.OutcomeSkipped || s[0].Attempts != 1 {
		t.Fatalf("result %+v, want skipped after attempt 1", res)
	}
	if n := rc.count(); n != 1 {
		t.Fatalf("the receiver got %d requests, want 1: nothing after the subscription was disabled", n)
	}
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	if c := temporalcost.Of(h.GetEvents()); c.LocalResults != 1 || c.ActivityTasks != 1 {
		t.Fatalf("want attempt 1 local and attempt 2 an activity that found the subscription disabled: %v", c)
	}
	if got := upsertedOutcomes(t, h); !slices.Equal(got, []string{"skipped"}) {
		t.Fatalf("Outcome upserts %v, want one, skipped", got)
	}
	recordDelivery(t, h, "delivery_disabled.json")
}

// timerWaits are the waits of the timers a history started, in order.
func timerWaits(h *historypb.History) []time.Duration {
	var out []time.Duration
	for _, ev := range h.GetEvents() {
		if a := ev.GetTimerStartedEventAttributes(); a != nil {
			out = append(out, a.GetStartToFireTimeout().AsDuration())
		}
	}
	return out
}
