package workflows_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

func TestDeliverySuccess(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 200)
	sub, whsec := f.Subscribe(t, rc.URL)
	ev := f.publish(t)
	env := f.newEnv()
	seen := watchAttempts(env)
	res, took := f.run(t, env, ev, defaultSchedule)

	if len(res.Subscriptions) != 1 || res.Subscriptions[0] != (workflows.SubscriptionDelivery{SubscriptionID: sub.ID, Outcome: workflows.OutcomeDelivered, Attempts: 1}) {
		t.Fatalf("result %+v", res)
	}
	if took > time.Second {
		t.Errorf("a first-attempt success took %v of workflow time", took)
	}
	// Attempt 1 ran as a local activity, inside the first workflow task,
	// and no activity task was scheduled.
	seen.check(t, "local 1")
	checkAttempts(t, f.Records(t, sub.ID), 200)
	wh, _ := standardwebhooks.NewWebhook(whsec)
	got := rc.Requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	if err := wh.Verify(got[0].Body, got[0].Header); err != nil {
		t.Fatalf("signature: %v", err)
	}
}

func TestDeliveryRetriesUntilSuccess(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 500, 500, 200)
	sub, whsec := f.Subscribe(t, rc.URL)
	ev := f.publish(t)
	env := f.newEnv()
	seen := watchAttempts(env)
	res, took := f.run(t, env, ev, defaultSchedule)

	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeDelivered || got.Attempts != 3 {
		t.Fatalf("result %+v", got)
	}
	checkAttempts(t, f.Records(t, sub.ID), 500, 500, 200)
	// A failed local first attempt is an outcome, not an error: the
	// retries are regular activities after durable timers, as before.
	seen.check(t, "local 1", "activity 2", "activity 3")
	// Attempt 3 follows waits of ~5s and ~5m (±10% jitter).
	if base := 5*time.Second + 5*time.Minute; took < base*9/10 || took > base*11/10+time.Second {
		t.Errorf("three attempts took %v of workflow time, want about %v", took, base)
	}
	// Every attempt carries the same webhook-id and body, signed afresh.
	wh, _ := standardwebhooks.NewWebhook(whsec)
	reqs := rc.Requests()
	for i, r := range reqs {
		if r.Header.Get("webhook-id") != ev.ID.String() || string(r.Body) != string(reqs[0].Body) {
			t.Errorf("attempt %d: webhook-id %q, body %s", i+1, r.Header.Get("webhook-id"), r.Body)
		}
		if err := wh.VerifyIgnoringTimestamp(r.Body, r.Header); err != nil {
			t.Errorf("attempt %d: signature: %v", i+1, err)
		}
	}
}

func TestDeliveryConnectionRefused(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 200)
	url := rc.URL
	rc.Close()
	sub, _ := f.Subscribe(t, url)
	ev := f.publish(t)
	res, took := f.run(t, f.newEnv(), ev, defaultSchedule)

	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeExhausted || got.Attempts != 4 {
		t.Fatalf("result %+v", got)
	}
	recs := f.Records(t, sub.ID)
	checkAttempts(t, recs, 0, 0, 0, 0)
	for _, r := range recs {
		if !strings.Contains(*r.ErrorMessage, "refused") {
			t.Errorf("attempt %d: error %q", r.AttemptNumber, *r.ErrorMessage)
		}
	}
	if base := 5*time.Second + 35*time.Minute; took < base*9/10 || took > base*11/10+time.Second {
		t.Errorf("four attempts took %v of workflow time, want about %v", took, base)
	}
}

func TestDeliveryGoneStops(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 410, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	res, _ := f.run(t, f.newEnv(), f.publish(t), defaultSchedule)
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeGone || got.Attempts != 1 {
		t.Fatalf("result %+v", got)
	}
	checkAttempts(t, f.Records(t, sub.ID), 410)
	if rc.Count() != 1 {
		t.Fatalf("receiver got %d requests after a 410", rc.Count())
	}
}

func TestDeliveryDisabledBetweenAttempts(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 500, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	env := f.newEnv()
	afterFirstAttempt(env, func() {
		if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, sub.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
			t.Error(err)
		}
	})
	res, _ := f.run(t, env, f.publish(t), defaultSchedule)
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeSkipped || got.Attempts != 1 {
		t.Fatalf("result %+v", got)
	}
	checkAttempts(t, f.Records(t, sub.ID), 500)
	if rc.Count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.Count())
	}
}

func TestDeliveryDeletedBetweenAttempts(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 503, 200)
	sub, _ := f.Subscribe(t, rc.URL)
	env := f.newEnv()
	afterFirstAttempt(env, func() {
		if err := f.Store.Webhooks().Delete(f.Ctx, f.Workspace.WorkspaceID, sub.ID); err != nil {
			t.Error(err)
		}
	})
	res, _ := f.run(t, env, f.publish(t), defaultSchedule)
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeSkipped || got.Attempts != 1 {
		t.Fatalf("result %+v", got)
	}
	if rc.Count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.Count())
	}
}

// Three subscriptions, one of them dead (accepts connections, never
// answers): the live two get the event at once, while the dead one's first
// attempt is still hanging, and its failures delay nobody.
func TestDeliveryFanOutWithOneDead(t *testing.T) {
	f := newDeliveryFixture(t)
	a, b := newReceiver(t, 200), newReceiver(t, 200)
	var deadMu sync.Mutex
	var deadStarts []time.Time
	release := make(chan struct{})
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadMu.Lock()
		deadStarts = append(deadStarts, time.Now())
		deadMu.Unlock()
		select { // hang until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); dead.Close() })

	// The dead subscription sorts first, so delivering in turn instead of
	// side by side would make the live ones wait for it.
	subDead, _ := f.SubscribeWithID(t, uuid.MustParse("00000000-0000-4000-8000-000000000001"), dead.URL)
	subA, _ := f.Subscribe(t, a.URL)
	subB, _ := f.Subscribe(t, b.URL)
	// A disabled subscription must not be attempted at all.
	off, _ := f.Subscribe(t, a.URL)
	if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, off.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}

	res, _ := f.run(t, f.newEnv(), f.publish(t), []time.Duration{time.Second, time.Second})
	outcomes := map[uuid.UUID]workflows.SubscriptionDelivery{}
	for _, s := range res.Subscriptions {
		outcomes[s.SubscriptionID] = s
	}
	if len(outcomes) != 3 || outcomes[subA.ID].Outcome != workflows.OutcomeDelivered || outcomes[subB.ID].Outcome != workflows.OutcomeDelivered ||
		outcomes[subDead.ID].Outcome != workflows.OutcomeExhausted || outcomes[subDead.ID].Attempts != 3 {
		t.Fatalf("outcomes %+v", res.Subscriptions)
	}
	checkAttempts(t, f.Records(t, subA.ID), 200)
	checkAttempts(t, f.Records(t, subB.ID), 200)
	checkAttempts(t, f.Records(t, subDead.ID), 0, 0, 0)
	if a.Count() != 1 || b.Count() != 1 {
		t.Fatalf("live receivers got %d and %d requests", a.Count(), b.Count())
	}
	// The dead endpoint's first attempt hung for a second; the live ones
	// must not have waited for it.
	deadMu.Lock()
	firstDead := deadStarts[0]
	deadMu.Unlock()
	for _, at := range []time.Time{a.Requests()[0].At, b.Requests()[0].At} {
		if at.Sub(firstDead) > 500*time.Millisecond {
			t.Errorf("a live receiver got its request %v after the dead one's first attempt began", at.Sub(firstDead))
		}
	}
}

func TestDeliveryWithoutSubscribers(t *testing.T) {
	f := newDeliveryFixture(t)
	res, _ := f.run(t, f.newEnv(), f.publish(t), defaultSchedule)
	if len(res.Subscriptions) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// An input without recipients delivers to none, whoever subscribes to the
// event's type now: recipients are fixed at acceptance, and the workflow
// never looks them up.
func TestDeliveryInputWithoutRecipientsDeliversToNone(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 200)
	f.Subscribe(t, rc.URL)
	ev := f.publish(t)
	res, _ := f.runInput(t, f.newEnv(), &workflows.DeliveryInput{EventID: ev.ID, Schedule: activities.Durations(defaultSchedule)})
	if len(res.Subscriptions) != 0 || res.Outcome != workflows.OutcomeSkipped {
		t.Fatalf("result %+v", res)
	}
	if rc.Count() != 0 {
		t.Fatalf("receiver got %d requests", rc.Count())
	}
}

func TestRetryDelayJitter(t *testing.T) {
	base := 5 * time.Minute
	seen := map[time.Duration]bool{}
	for range 50 {
		ev, sub := uuid.New(), uuid.New()
		d := workflows.RetryDelay(base, ev, sub, 3)
		if d < base*9/10 || d > base*11/10 {
			t.Fatalf("delay %v outside ±10%% of %v", d, base)
		}
		if d != workflows.RetryDelay(base, ev, sub, 3) {
			t.Fatal("the delay is not deterministic")
		}
		seen[d] = true
	}
	if len(seen) < 40 {
		t.Fatalf("only %d distinct delays in 50: no real jitter", len(seen))
	}
}

// A delivery cancelled (an operator's cancel) while it waits for attempt 2
// reports its recipient "error", not the "exhausted" of attempt 1: the run
// builds its result before the recipient's coroutine sees the cancellation.
func TestDeliveryCancelledBetweenAttemptsEndsInError(t *testing.T) {
	f := newDeliveryFixture(t)
	rc := newReceiver(t, 500)
	sub, _ := f.Subscribe(t, rc.URL)
	env := f.newEnv()
	env.RegisterDelayedCallback(env.CancelWorkflow, 10*time.Minute)
	res, took := f.run(t, env, f.publish(t), []time.Duration{time.Hour})
	if got := res.Subscriptions[0]; got.Outcome != workflows.OutcomeError || got.Attempts != 1 || res.Outcome != workflows.OutcomeError {
		t.Fatalf("result %+v, want the recipient in error after attempt 1", res)
	}
	if took > 11*time.Minute {
		t.Errorf("the cancelled run took %v of workflow time, want it to end at the cancellation (10m)", took)
	}
	checkAttempts(t, f.Records(t, sub.ID), 500)
}
