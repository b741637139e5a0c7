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
	"github.com/openlayer-ai/workspace-service/harness/deliverytest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// handOver is a fixture whose worker knows one subscription slow, for the
// hand-over of its first attempts from the workflow task to a regular
// activity.
type handOver struct {
	*fixture
	sub models.WebhookSubscription
	rc  *deliverytest.Receiver
	env *testsuite.TestActivityEnvironment
}

// newHandOver: the local share refuses slow subscriptions, the regular one
// holds a slow workspace to regularSlow tasks, and slowBy is the share that
// saw the subscription slow (a 2 s request). known: an earlier event's
// attempt made its workspace known to the worker, so the shares are asked
// before the database.
func newHandOver(t *testing.T, regularSlow int, known bool, slowBy func(*activities.Activities) *activities.WorkspaceShare) *handOver {
	t.Helper()
	f := newFixture(t, true)
	f.Acts.LocalShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: 10, RefuseSlowSubscriptions: true}
	f.Acts.RegularShare = &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 10, Slow: regularSlow}
	rc := newReceiver(t, func(w http.ResponseWriter, n int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	if known {
		if res := f.attempt(t, f.Publish(t, `{}`), sub, 1); res.Outcome != activities.AttemptDelivered {
			t.Fatalf("an earlier event: %+v", res)
		}
	}
	slow, _ := slowBy(f.Acts).Take(f.Workspace.WorkspaceID, sub.ID, "an earlier attempt")
	slow.Sending()
	slow.Done(2 * time.Second)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.Acts)
	env.SetTestTimeout(time.Minute)
	return &handOver{fixture: f, sub: sub, rc: rc, env: env}
}

func regularShare(a *activities.Activities) *activities.WorkspaceShare { return a.RegularShare }
func localShare(a *activities.Activities) *activities.WorkspaceShare   { return a.LocalShare }

// first is attempt 1 of ev to the slow subscription.
func (h *handOver) first(ev models.Event) *activities.AttemptInput {
	return &activities.AttemptInput{EventID: ev.ID, SubscriptionID: h.sub.ID, AttemptNumber: 1}
}

// local makes in as a local activity.
func (h *handOver) local(in *activities.AttemptInput) (activities.AttemptResult, error) {
	var res activities.AttemptResult
	val, err := h.env.ExecuteLocalActivity(h.Acts.AttemptDelivery, in)
	if err == nil {
		err = val.Get(&res)
	}
	return res, err
}

// regular makes in as a regular activity's first run (a plain call is no
// activity: it could be a retry).
func (h *handOver) regular(in *activities.AttemptInput) (activities.AttemptResult, error) {
	var res activities.AttemptResult
	val, err := h.env.ExecuteActivity(h.Acts.AttemptDelivery, in)
	if err == nil {
		err = val.Get(&res)
	}
	return res, err
}

// holdSlot takes one of the subscription's slots as another attempt would.
func (h *handOver) holdSlot(t *testing.T) uuid.UUID {
	t.Helper()
	key := store.SendKey(uuid.New(), 1)
	if g, err := h.Store.SendLimits().Acquire(h.Ctx, h.sub.ID, store.SendLease{Key: key, MaxInFlight: 1, Duration: time.Minute}); err != nil || !g.OK {
		t.Fatalf("hold a slot: %+v, %v", g, err)
	}
	return key
}

func isCrowded(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == activities.ErrLocalAttemptCrowded
}

// A subscription known slow by its regular attempts (its first attempts
// all go there once refused locally) stays off the workflow task: its next
// first attempt hands over even when the local share has nothing, though
// the worker meets its workspace for the first time (asked after the
// database), keeping its lease for the regular attempt.
func TestLocalAttemptHandsOverForASubscriptionSlowElsewhere(t *testing.T) {
	h := newHandOver(t, 10, false, regularShare)
	ev := h.Publish(t, `{}`)
	if _, err := h.local(h.first(ev)); !isCrowded(err) {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if n := h.rc.Count(); n != 0 {
		t.Fatalf("receiver got %d requests, want 0", n)
	}
	if leases := h.leases(t, h.sub); leases != 1 {
		t.Fatalf("%d leases held after the hand-over, want its 1", leases)
	}
	if res := h.attempt(t, ev, h.sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt: %+v", res)
	}
	if leases := h.leases(t, h.sub); leases != 0 {
		t.Fatalf("%d leases held after the regular attempt, want 0", leases)
	}
}

// A hand-over whose regular attempt finds its workspace's share full (it
// filled meanwhile, or the attempt runs on another worker) gives the lease
// back while it waits, so the slot is not held with nothing sent.
func TestHandedOverAttemptRefusedByItsShareGivesTheLeaseBack(t *testing.T) {
	h := newHandOver(t, 1, true, regularShare)
	ev := h.Publish(t, `{}`)
	if _, err := h.local(h.first(ev)); !isCrowded(err) {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if leases := h.leases(t, h.sub); leases != 1 {
		t.Fatalf("%d leases held after the hand-over, want its 1", leases)
	}
	hold, ok := h.Acts.RegularShare.Take(h.Workspace.WorkspaceID, uuid.New(), "another regular attempt")
	if !ok {
		t.Fatal("take")
	}
	if res, err := h.regular(h.first(ev)); err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("the regular attempt with its share full: %+v, %v", res, err)
	}
	if leases := h.leases(t, h.sub); leases != 0 {
		t.Fatalf("%d leases held while the refused attempt waits, want 0", leases)
	}
	hold.Done(0)
	if res := h.attempt(t, ev, h.sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt with its share free: %+v", res)
	}
	if n := h.rc.Count(); n != 2 {
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
	h := newHandOver(t, 2, true, regularShare)
	reg := prometheus.NewRegistry()
	h.Acts.Metrics = activities.NewMetrics(reg)
	h.Acts.MaxInFlight = 1
	ev := h.Publish(t, `{}`)
	other := h.holdSlot(t)
	for i := 1; i <= 2; i++ {
		res, err := h.local(h.first(ev))
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
	h.assertNothingMade(t, ev, h.sub, 1)

	// The slot freed, the local attempt hands over, holding it.
	if err := h.Store.SendLimits().Release(h.Ctx, h.sub.ID, other); err != nil {
		t.Fatal(err)
	}
	if _, err := h.local(h.first(ev)); !isCrowded(err) {
		t.Fatalf("err %v, want %s", err, activities.ErrLocalAttemptCrowded)
	}
	if g, err := h.Store.SendLimits().Acquire(h.Ctx, h.sub.ID, store.SendLease{Key: store.SendKey(uuid.New(), 1), MaxInFlight: 1, Duration: time.Minute}); err != nil || g.OK {
		t.Fatalf("another attempt got the slot handed over: %+v, %v", g, err)
	}
	if n := h.rc.Count(); n != 1 {
		t.Fatalf("receiver got %d requests before the regular attempt, want the earlier event's 1", n)
	}
	if res := h.attempt(t, ev, h.sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("the regular attempt: %+v", res)
	}
	h.assertLeaseFree(t, h.sub)

	// Its workspace holding its regular share: throttled, no statement needed.
	ev2 := h.Publish(t, `{}`)
	for i := range 2 {
		hold, ok := h.Acts.RegularShare.Take(h.Workspace.WorkspaceID, h.sub.ID, "a regular attempt "+strconv.Itoa(i))
		if !ok {
			t.Fatal("take")
		}
		defer hold.Done(0)
	}
	if res, err := h.local(h.first(ev2)); err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with the regular share full: %+v, %v; want throttled", res, err)
	}
	if got := throttledCount(t, reg, activities.ThrottledWorkspaceShare); got != 2 {
		t.Fatalf("throttled{workspace_share} %v, want 2 (the hand-over and this)", got)
	}
	h.assertNothingMade(t, ev2, h.sub, 1)
	h.assertLeaseFree(t, h.sub)
}

// A subscription its local attempts found slow (its first regular attempts
// not yet over) is asked the same way: with every slot held, its next local
// attempt is throttled, not handed to a regular attempt to be refused.
func TestLocalAttemptToASubscriptionSlowLocallyWaitsForItsLimits(t *testing.T) {
	h := newHandOver(t, 2, true, localShare)
	h.Acts.MaxInFlight = 1
	ev := h.Publish(t, `{}`)
	h.holdSlot(t)
	if res, err := h.local(h.first(ev)); err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with every slot held: %+v, %v; want throttled", res, err)
	}
	h.assertNothingMade(t, ev, h.sub, 1)
}

// Met for the first time by this worker (its workspace asked after the
// database), a local attempt to a slow subscription whose workspace holds
// its regular share is throttled and gives its lease back: it hands
// nothing over that its regular attempt would be refused.
func TestLocalAttemptToASlowSubscriptionOfAFullWorkspace(t *testing.T) {
	h := newHandOver(t, 1, false, regularShare)
	ev := h.Publish(t, `{}`)
	hold, _ := h.Acts.RegularShare.Take(h.Workspace.WorkspaceID, uuid.New(), "another regular attempt")
	defer hold.Done(0)
	if res, err := h.local(h.first(ev)); err != nil || res.Outcome != activities.AttemptThrottled {
		t.Fatalf("local attempt with the regular share full: %+v, %v; want throttled", res, err)
	}
	if leases := h.leases(t, h.sub); leases != 0 {
		t.Fatalf("%d leases held, want 0", leases)
	}
	h.assertNothingMade(t, ev, h.sub, 1)
}
