package activities_test

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// assertLeaseFree checks the refused attempt gave its send lease back: a
// bound of one still admits another attempt.
func (f *fixture) assertLeaseFree(t *testing.T, sub models.WebhookSubscription) {
	t.Helper()
	key := store.SendKey(uuid.New(), 1)
	g, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: key, MaxInFlight: 1, Duration: time.Minute})
	if err != nil || !g.OK {
		t.Fatalf("the refused attempt still holds its send lease: %+v, %v", g, err)
	}
	if err := f.Store.SendLimits().Release(f.Ctx, sub.ID, key); err != nil {
		t.Fatal(err)
	}
}

// A workspace holding its share of the worker's workflow-task slots makes
// its next first attempt elsewhere: the local attempt sends and records
// nothing, gives its send lease back and fails with ErrLocalAttemptCrowded,
// which the workflow answers with a regular activity. Another workspace's
// local attempt goes on.
func TestLocalAttemptCrowdedGivesUpBeforeSending(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 1, Slow: 1}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	hold, ok := f.Acts.LocalShare.Take(f.Workspace.WorkspaceID, uuid.New(), "another event's workflow task")
	if !ok {
		t.Fatal("take")
	}
	in := &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	_, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, in)
	var appErr *temporal.ApplicationError
	// Not retryable: retried locally, it would hold the slot it gave up.
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrLocalAttemptCrowded || !appErr.NonRetryable() {
		t.Fatalf("err %v, want a non-retryable %s", err, activities.ErrLocalAttemptCrowded)
	}
	if n := rc.Count(); n != 0 {
		t.Fatalf("receiver got %d requests from a crowded attempt, want 0", n)
	}
	f.assertNothingMade(t, ev, sub, 1)
	f.assertLeaseFree(t, sub)
	if got := throttledCount(t, reg, activities.ThrottledWorkspaceShare); got != 1 {
		t.Fatalf("throttled{workspace_share} %v, want 1", got)
	}

	// Once the slot is free, the same attempt is made locally.
	hold.Done(0)
	val, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, in)
	var res activities.AttemptResult
	if err != nil || val.Get(&res) != nil || res.Outcome != activities.AttemptDelivered {
		t.Fatalf("local attempt with a free slot: %+v, %v", res, err)
	}
}

// A regular attempt refused by its workspace's share is throttled: nothing
// sent or recorded, the send lease given back, made again after a wait.
func TestRegularAttemptCrowdedIsThrottled(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 1, Slow: 1}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	hold, _ := f.Acts.RegularShare.Take(f.Workspace.WorkspaceID, uuid.New(), "another attempt")
	res := f.attempt(t, ev, sub, 2)
	if res.Outcome != activities.AttemptThrottled || res.RetryAfter <= 0 || time.Duration(res.RetryAfter) > time.Second+10*time.Millisecond {
		t.Fatalf("crowded regular attempt: %+v", res)
	}
	if n := rc.Count(); n != 0 {
		t.Fatalf("receiver got %d requests, want 0", n)
	}
	f.assertNothingMade(t, ev, sub, 2)
	f.assertLeaseFree(t, sub)
	// Refused again, the subscription's workspace now known (asked before the database).
	if res := f.attempt(t, ev, sub, 2); res.Outcome != activities.AttemptThrottled {
		t.Fatalf("crowded again: %+v", res)
	}
	if got := throttledCount(t, reg, activities.ThrottledWorkspaceShare); got != 2 {
		t.Fatalf("throttled{workspace_share} %v, want 2", got)
	}
	f.assertLeaseFree(t, sub)
	hold.Done(0)
	if res := f.attempt(t, ev, sub, 2); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("with the slot free: %+v", res)
	}
}

// A subscription known slow by its regular attempts (its first attempts
// all go there once refused locally) stays off the workflow task: its next
// first attempt hands over even when the local share has nothing, though
// the worker meets its workspace for the first time (asked after the
// database), keeping its lease for the regular attempt.
func TestLocalAttemptHandsOverForASubscriptionSlowElsewhere(t *testing.T) {
	f := newFixture(t, true)
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	slow, _ := f.Acts.RegularShare.Take(f.Workspace.WorkspaceID, sub.ID, "an earlier regular attempt")
	slow.Sending()
	slow.Done(2 * time.Second)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	_, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrLocalAttemptCrowded {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if n := rc.Count(); n != 0 {
		t.Fatalf("receiver got %d requests, want 0", n)
	}
	if leases := f.leases(t, sub); leases != 1 {
		t.Fatalf("%d leases held after the hand-over, want its 1", leases)
	}
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt: %+v", res)
	}
	if leases := f.leases(t, sub); leases != 0 {
		t.Fatalf("%d leases held after the regular attempt, want 0", leases)
	}
}

// leases counts the subscription's send leases held now.
func (f *fixture) leases(t *testing.T, sub models.WebhookSubscription) int {
	t.Helper()
	var n int
	err := f.Store.DB().NewRaw(`SELECT count(*) FROM webhook_send_limits, unnest(leases) AS x
		WHERE subscription_id = ? AND x.held_until > clock_timestamp()`, sub.ID).Scan(f.Ctx, &n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A hand-over whose regular attempt finds its workspace's share full (it
// filled meanwhile, or the attempt runs on another worker) gives the lease
// back while it waits, so the slot is not held with nothing sent.
func TestHandedOverAttemptRefusedByItsShareGivesTheLeaseBack(t *testing.T) {
	f := newFixture(t, true)
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 1}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	if res := f.attempt(t, f.Publish(t, `{}`), sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("an earlier event: %+v", res)
	}
	ev := f.Publish(t, `{}`)
	ws := f.Workspace.WorkspaceID
	slow, _ := f.Acts.RegularShare.Take(ws, sub.ID, "an earlier regular attempt")
	slow.Sending()
	slow.Done(2 * time.Second)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	_, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrLocalAttemptCrowded {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if leases := f.leases(t, sub); leases != 1 {
		t.Fatalf("%d leases held after the hand-over, want its 1", leases)
	}
	hold, ok := f.Acts.RegularShare.Take(ws, uuid.New(), "another regular attempt")
	if !ok {
		t.Fatal("take")
	}
	// The regular activity's first run (a plain call is no activity: it
	// could be a retry, which gives nothing back).
	val, err := env.ExecuteActivity(f.Acts.AttemptDelivery, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var res activities.AttemptResult
	if err != nil || val.Get(&res) != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("the regular attempt with its share full: %+v, %v", res, err)
	}
	if leases := f.leases(t, sub); leases != 0 {
		t.Fatalf("%d leases held while the refused attempt waits, want 0", leases)
	}
	hold.Done(0)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt with its share free: %+v", res)
	}
	if n := rc.Count(); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
}

// A local first attempt to a slow subscription asks its send limits before
// handing over to a regular attempt: with every slot held it is throttled
// on the spot (no regular activity that would only be refused); with a
// slot free it hands over, keeping its lease for the regular attempt,
// which takes it over by the same key. With its workspace's regular share
// full, it is throttled without a statement.
func TestLocalAttemptToASlowSubscriptionWaitsForItsLimits(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	f.Acts.MaxInFlight = 1
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 2}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	// An earlier event's attempt makes the subscription's workspace known
	// to the worker, so the share is asked before the database.
	if res := f.attempt(t, f.Publish(t, `{}`), sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("an earlier event: %+v", res)
	}
	ev := f.Publish(t, `{}`)
	ws := f.Workspace.WorkspaceID
	slow, _ := f.Acts.RegularShare.Take(ws, sub.ID, "an earlier regular attempt")
	slow.Sending()
	slow.Done(2 * time.Second)
	other := store.SendKey(uuid.New(), 1)
	if g, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: other, MaxInFlight: 1, Duration: time.Minute}); err != nil || !g.OK {
		t.Fatalf("hold the only slot: %+v, %v", g, err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	in := &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1}
	local := func() (activities.AttemptResult, error) {
		t.Helper()
		var res activities.AttemptResult
		val, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, in)
		if err == nil {
			err = val.Get(&res)
		}
		return res, err
	}
	for i := 1; i <= 2; i++ {
		res, err := local()
		if err != nil || res.Outcome != activities.AttemptThrottled || res.RetryAfter <= 0 {
			t.Fatalf("local attempt %d with every slot held: %+v, %v; want throttled", i, res, err)
		}
		if got := throttledCount(t, reg, store.ThrottledInFlight); got != float64(i) {
			t.Fatalf("throttled{in_flight} %v, want %d", got, i)
		}
	}
	if got := throttledCount(t, reg, activities.ThrottledWorkspaceShare); got != 0 {
		t.Fatalf("throttled{workspace_share} %v, want 0", got)
	}
	f.assertNothingMade(t, ev, sub, 1)

	// The slot freed, the local attempt hands over, holding it.
	if err := f.Store.SendLimits().Release(f.Ctx, sub.ID, other); err != nil {
		t.Fatal(err)
	}
	_, err := local()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrLocalAttemptCrowded {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if g, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: store.SendKey(uuid.New(), 1), MaxInFlight: 1, Duration: time.Minute}); err != nil || g.OK {
		t.Fatalf("another attempt got the slot handed over: %+v, %v", g, err)
	}
	if n := rc.Count(); n != 1 {
		t.Fatalf("receiver got %d requests before the regular attempt, want the earlier event's 1", n)
	}
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt: %+v", res)
	}
	f.assertLeaseFree(t, sub)

	// Its workspace holding its regular share: throttled, no statement needed.
	ev2 := f.Publish(t, `{}`)
	for i := range 2 {
		hold, ok := f.Acts.RegularShare.Take(ws, sub.ID, "a regular attempt "+strconv.Itoa(i))
		if !ok {
			t.Fatal("take")
		}
		defer hold.Done(0)
	}
	in = &activities.AttemptInput{EventID: ev2.ID, SubscriptionID: sub.ID, AttemptNumber: 1}
	res, err := local()
	if err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with the regular share full: %+v, %v; want throttled", res, err)
	}
	if got := throttledCount(t, reg, activities.ThrottledWorkspaceShare); got != 2 {
		t.Fatalf("throttled{workspace_share} %v, want 2 (the hand-over and this)", got)
	}
	f.assertNothingMade(t, ev2, sub, 1)
	f.assertLeaseFree(t, sub)
}

// A subscription its local attempts found slow (its first regular attempts
// not yet over) is asked the same way: with every slot held, its next local
// attempt is throttled, not handed to a regular attempt to be refused.
func TestLocalAttemptToASubscriptionSlowLocallyWaitsForItsLimits(t *testing.T) {
	f := newFixture(t, true)
	f.Acts.MaxInFlight = 1
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 2}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	if res := f.attempt(t, f.Publish(t, `{}`), sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("an earlier event: %+v", res)
	}
	ev := f.Publish(t, `{}`)
	slow, _ := f.Acts.LocalShare.Take(f.Workspace.WorkspaceID, sub.ID, "an earlier event's workflow task")
	slow.Sending()
	slow.Done(2 * time.Second)
	if _, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: store.SendKey(uuid.New(), 1), MaxInFlight: 1, Duration: time.Minute}); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	val, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var res activities.AttemptResult
	if err == nil {
		err = val.Get(&res)
	}
	if err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with every slot held: %+v, %v; want throttled", res, err)
	}
	f.assertNothingMade(t, ev, sub, 1)
}

// Met for the first time by this worker (its workspace asked after the
// database), a local attempt to a slow subscription whose workspace holds
// its regular share is throttled and gives its lease back: it hands
// nothing over that its regular attempt would be refused.
func TestLocalAttemptToASlowSubscriptionOfAFullWorkspace(t *testing.T) {
	f := newFixture(t, true)
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 1}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{}`)
	slow, _ := f.Acts.RegularShare.Take(f.Workspace.WorkspaceID, sub.ID, "an earlier regular attempt")
	slow.Sending()
	slow.Done(2 * time.Second)
	hold, _ := f.Acts.RegularShare.Take(f.Workspace.WorkspaceID, uuid.New(), "another regular attempt")
	defer hold.Done(0)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	val, err := env.ExecuteLocalActivity(f.Acts.AttemptDelivery, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var res activities.AttemptResult
	if err != nil || val.Get(&res) != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with the regular share full: %+v, %v; want throttled", res, err)
	}
	if leases := f.leases(t, sub); leases != 0 {
		t.Fatalf("%d leases held, want 0", leases)
	}
	f.assertNothingMade(t, ev, sub, 1)
}
