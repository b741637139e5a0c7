package activities_test

import (
	"errors"
	"net/http"
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
