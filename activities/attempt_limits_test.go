package activities_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// throttledCount reads webhook_attempts_throttled_total{reason}.
func throttledCount(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "webhook_attempts_throttled_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no webhook_attempts_throttled_total{reason=%q}", reason)
	return 0
}

func (f *fixture) attemptIn(t *testing.T, in activities.AttemptInput) *activities.AttemptResult {
	t.Helper()
	res, err := f.Acts.AttemptDelivery(f.Ctx, &in)
	if err != nil {
		t.Fatalf("attempt %+v: %v", in, err)
	}
	return res
}

// assertNothingMade checks a throttled attempt sent nothing (beyond sent
// requests already counted) and recorded nothing: no record, no state.
func (f *fixture) assertNothingMade(t *testing.T, ev models.Event, sub models.WebhookSubscription, n int) {
	t.Helper()
	if _, err := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, n); err != models.ErrNotFound {
		t.Fatalf("a throttled attempt has a record (%v)", err)
	}
	var states int
	if err := f.Store.DB().QueryRowContext(f.Ctx, `SELECT count(*) FROM webhook_delivery_states WHERE event_id = ? AND subscription_id = ?`, ev.ID, sub.ID).Scan(&states); err != nil || states != 0 {
		t.Fatalf("a throttled attempt wrote the delivery's state (%d rows, %v)", states, err)
	}
}

// A 429 with Retry-After: 30 is reported (RetryAfter 30 s) and pauses that
// subscription's every event, not another subscription's: the paused
// attempt is throttled, sends nothing and records nothing.
func TestAttemptRetryAfterPausesSubscription(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	busy := newReceiver(t, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	fine := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	a, _ := f.Subscribe(t, busy.URL)
	b, _ := f.Subscribe(t, fine.URL)
	ev1, ev2 := f.Publish(t, `{}`), f.Publish(t, `{}`)

	start := time.Now()
	res := f.attemptIn(t, activities.AttemptInput{EventID: ev1.ID, SubscriptionID: a.ID, AttemptNumber: 1, NextAttemptIn: activities.Duration(time.Second), MaxWait: activities.Duration(40 * time.Second)})
	if res.Outcome != activities.AttemptFailed || res.StatusCode != 429 || time.Duration(res.RetryAfter) != 30*time.Second {
		t.Fatalf("429 Retry-After: 30: %+v", res)
	}
	res = f.attemptIn(t, activities.AttemptInput{EventID: ev2.ID, SubscriptionID: a.ID, AttemptNumber: 1, MaxWait: activities.Duration(40 * time.Second)})
	if res.Outcome != activities.AttemptThrottled || time.Duration(res.RetryAfter) < 30*time.Second-time.Since(start) || time.Duration(res.RetryAfter) > 31*time.Second {
		t.Fatalf("another event to the paused subscription: %+v", res)
	}
	if n := busy.Count(); n != 1 {
		t.Fatalf("the paused receiver got %d requests, want 1", n)
	}
	f.assertNothingMade(t, ev2, a, 1)
	if got := throttledCount(t, reg, store.ThrottledPaused); got != 1 {
		t.Fatalf("throttled{paused} %v", got)
	}
	for _, ev := range []models.Event{ev1, ev2} {
		if res := f.attempt(t, ev, b, 1); res.Outcome != activities.AttemptDelivered || time.Duration(res.RetryAfter) != 0 {
			t.Fatalf("the other subscription: %+v", res)
		}
	}
}

// Retry-After is bounded by the schedule's longest wait (MaxWait, or an
// hour without one), read as an HTTP date too, and only on 429 and 503.
func TestAttemptRetryAfterBounds(t *testing.T) {
	f := newFixture(t, true)
	for _, c := range []struct {
		name       string
		status     int
		header     string
		maxWait    time.Duration
		want       time.Duration
		wantPaused bool
	}{
		{"beyond MaxWait", 429, "3600", 40 * time.Second, 40 * time.Second, true},
		{"beyond the default bound", 503, "86400", 0, time.Hour, true},
		{"HTTP date", 503, time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat), time.Minute, 20 * time.Second, true},
		{"garbage", 429, "soon", time.Minute, 0, false},
		{"on a 500", 500, "30", time.Minute, 0, false},
	} {
		rc := newReceiver(t, func(w http.ResponseWriter, _ int) {
			w.Header().Set("Retry-After", c.header)
			w.WriteHeader(c.status)
		})
		sub, _ := f.Subscribe(t, rc.URL)
		ev := f.Publish(t, `{}`)
		res := f.attemptIn(t, activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1, MaxWait: activities.Duration(c.maxWait)})
		if res.Outcome != activities.AttemptFailed || time.Duration(res.RetryAfter) > c.want || time.Duration(res.RetryAfter) < c.want-2*time.Second {
			t.Errorf("%s: %+v, want RetryAfter %v", c.name, res, c.want)
		}
		next := f.attemptIn(t, activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 2, MaxWait: activities.Duration(c.maxWait)})
		if paused := next.Outcome == activities.AttemptThrottled; paused != c.wantPaused || (paused && time.Duration(next.RetryAfter) > c.want+time.Second) {
			t.Errorf("%s: next attempt %+v, want paused %v", c.name, next, c.wantPaused)
		}
	}
}

// At most MaxInFlight attempts hold a subscription's slots; one more is
// throttled (sending and recording nothing) until a slot is released, and
// every attempt releases its own after the send, failed or not.
func TestAttemptInFlightLimit(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	f.Acts.MaxInFlight = 1
	rc := newReceiver(t, func(w http.ResponseWriter, n int) {
		if n%2 == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	sub, _ := f.Subscribe(t, rc.URL)
	evs := []models.Event{f.Publish(t, `{}`), f.Publish(t, `{}`), f.Publish(t, `{}`)}
	// Each attempt finds the slot its predecessor released.
	for i, ev := range evs[:2] {
		if res := f.attempt(t, ev, sub, 1); res.Outcome == activities.AttemptThrottled {
			t.Fatalf("attempt %d after the previous one released its slot: %+v", i, res)
		}
	}
	// Another replica's attempt holds the only slot.
	other := store.SendKey(uuid.New(), 1)
	g, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: other, MaxInFlight: 1, Duration: time.Minute})
	if err != nil || !g.OK {
		t.Fatalf("acquire: %+v, %v", g, err)
	}
	res := f.attempt(t, evs[2], sub, 1)
	if res.Outcome != activities.AttemptThrottled || time.Duration(res.RetryAfter) <= 0 || time.Duration(res.RetryAfter) > time.Second+10*time.Millisecond {
		t.Fatalf("with the slot taken: %+v", res)
	}
	// Refused again and again, it asks less and less often: after five
	// refusals in a row, every 15 to 30 s (the lease it waits on has a
	// minute left).
	for _, c := range []struct {
		refused  int
		min, max time.Duration
	}{
		{5, 15 * time.Second, 30 * time.Second},
		// One of a crowd: past the lease's end.
		{100, time.Minute, 2 * time.Minute},
		{500, 450 * time.Second, 15 * time.Minute},
	} {
		again, err := f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: evs[2].ID, SubscriptionID: sub.ID, AttemptNumber: 1, Throttled: c.refused})
		if err != nil || again.Outcome != activities.AttemptThrottled || time.Duration(again.RetryAfter) < c.min || time.Duration(again.RetryAfter) > c.max+10*time.Millisecond {
			t.Fatalf("refused again after %d refusals: %+v, %v", c.refused, again, err)
		}
	}
	f.assertNothingMade(t, evs[2], sub, 1)
	if n := rc.Count(); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
	if got := throttledCount(t, reg, store.ThrottledInFlight); got != 4 {
		t.Fatalf("throttled{in_flight} %v", got)
	}
	if err := f.Store.SendLimits().Release(f.Ctx, sub.ID, other); err != nil {
		t.Fatal(err)
	}
	if res := f.attempt(t, evs[2], sub, 1); res.Outcome != activities.AttemptFailed {
		t.Fatalf("after the release: %+v", res)
	}
}

// rateLimitPerSecond holds an attempt back for the wait the rate leaves.
func TestAttemptRateLimit(t *testing.T) {
	f := newFixture(t, true)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL)
	if _, err := f.Store.DB().ExecContext(f.Ctx, `UPDATE webhook_subscriptions SET rate_limit_per_second = 1 WHERE id = ?`, sub.ID); err != nil {
		t.Fatal(err)
	}
	ev1, ev2 := f.Publish(t, `{}`), f.Publish(t, `{}`)
	start := time.Now()
	if res := f.attempt(t, ev1, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("first: %+v", res)
	}
	// A second after the first send's start, less the time the two calls
	// took (long on a loaded machine).
	res := f.attempt(t, ev2, sub, 1)
	if res.Outcome != activities.AttemptThrottled || time.Duration(res.RetryAfter) < time.Second-time.Since(start) || time.Duration(res.RetryAfter) > 1100*time.Millisecond {
		t.Fatalf("second within the second: %+v", res)
	}
	f.assertNothingMade(t, ev2, sub, 1)
	if got := throttledCount(t, reg, store.ThrottledRate); got != 1 {
		t.Fatalf("throttled{rate} %v", got)
	}
	time.Sleep(time.Duration(res.RetryAfter))
	if res := f.attempt(t, ev2, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("second after its wait: %+v", res)
	}
	if n := rc.Count(); n != 2 {
		t.Fatalf("receiver got %d requests, want 2", n)
	}
}

// An attempt refused a slot behind a crowd waits about as long as the crowd
// takes to be served (waiting × a slot's hold ÷ slots), not the backoff's
// first second: each recheck is a round trip through Temporal, and a fixed
// backoff made thousands of waiters recheck many times a second for a few
// real attempts. The first refused still waits its backoff alone.
func TestCrowdedAttemptsWaitForTheirCrowd(t *testing.T) {
	f := newFixture(t, true)
	f.Acts.MaxInFlight = 2
	const hold = 100 * time.Millisecond
	rc := newReceiver(t, func(w http.ResponseWriter, n int) {
		time.Sleep(hold)
		w.WriteHeader(http.StatusOK)
	})
	sub, _ := f.Subscribe(t, rc.URL)
	// Other replicas' attempts hold both slots.
	holdBoth := func() []uuid.UUID {
		var keys []uuid.UUID
		for range 2 {
			key := store.SendKey(uuid.New(), 1)
			g, err := f.Store.SendLimits().Acquire(f.Ctx, sub.ID, store.SendLease{Key: key, MaxInFlight: 2, Duration: time.Hour})
			if err != nil || !g.OK {
				t.Fatalf("acquire: %+v, %v", g, err)
			}
			keys = append(keys, key)
		}
		return keys
	}
	// A refusal makes the subscription's queue; the attempt made once a
	// slot is free shows how long a slot is held.
	ev := f.Publish(t, `{}`)
	held := holdBoth()
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptThrottled {
		t.Fatalf("first attempt with both slots held: %+v", res)
	}
	if err := f.Store.SendLimits().Release(f.Ctx, sub.ID, held[0]); err != nil {
		t.Fatal(err)
	}
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("first attempt with a slot free: %+v", res)
	}
	if err := f.Store.SendLimits().Release(f.Ctx, sub.ID, held[1]); err != nil {
		t.Fatal(err)
	}
	holdBoth()
	const crowd = 60
	var first, last time.Duration
	for i := range crowd {
		res := f.attempt(t, f.Publish(t, `{}`), sub, 1)
		if res.Outcome != activities.AttemptThrottled {
			t.Fatalf("attempt %d with both slots held: %+v", i, res)
		}
		if i == 0 {
			first = time.Duration(res.RetryAfter)
		}
		last = time.Duration(res.RetryAfter)
	}
	if first > time.Second+10*time.Millisecond {
		t.Fatalf("the first refused waits %v, want its backoff (at most 1 s)", first)
	}
	// 60 waiting × at least 100 ms ÷ 2 slots = 3 s, spread over half to all of it.
	if want := crowd * hold / 2 / 2; last < want {
		t.Fatalf("the 60th refused waits %v, want at least %v", last, want)
	}
	if n := rc.Count(); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	// What someone waits on waits its backoff alone, not behind the crowd:
	// a redelivery, and a test event's attempt.
	testEv, err := f.Store.Events().Create(f.Ctx, models.NewEvent{
		WorkspaceID: f.Workspace.WorkspaceID, Type: models.EventWebhookTest, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []activities.AttemptInput{
		{EventID: f.Publish(t, `{}`).ID, SubscriptionID: sub.ID, AttemptNumber: 2, Manual: true},
		{EventID: testEv.ID, SubscriptionID: sub.ID, AttemptNumber: 1},
	} {
		for range 3 {
			res := f.attemptIn(t, in)
			if res.Outcome != activities.AttemptThrottled || time.Duration(res.RetryAfter) > time.Second+10*time.Millisecond {
				t.Fatalf("%+v behind the crowd: %+v, want throttled for its backoff (at most 1 s)", in, res)
			}
		}
	}
}
