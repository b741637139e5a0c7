package webhooks_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// pressingReceiver is an HTTPS receiver that verifies every request with
// the reference library and answers as its answer function says, given
// how many requests that event (webhook-id) has brought so far: it can
// send headers (Retry-After) that the status-only receiver cannot.
type pressingReceiver struct {
	*httptest.Server
	answer func(w http.ResponseWriter, nth int)

	mu      sync.Mutex
	hook    *standardwebhooks.Webhook
	arrived map[string][]time.Time
	all     []time.Time
	bad     []string
}

func newPressingReceiver(t *testing.T, answer func(w http.ResponseWriter, nth int)) *pressingReceiver {
	t.Helper()
	rc := &pressingReceiver{answer: answer, arrived: map[string][]time.Time{}}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *pressingReceiver) trust(t *testing.T, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	rc.hook = wh
	rc.mu.Unlock()
}

func (rc *pressingReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now, id := time.Now(), r.Header.Get("webhook-id")
	rc.mu.Lock()
	if rc.hook == nil || rc.hook.Verify(body, r.Header) != nil {
		rc.bad = append(rc.bad, id)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.arrived[id] = append(rc.arrived[id], now)
	rc.all = append(rc.all, now)
	nth := len(rc.arrived[id])
	rc.mu.Unlock()
	rc.answer(w, nth)
}

func (rc *pressingReceiver) check(t *testing.T) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Errorf("%d requests failed signature verification (webhook-ids %v)", len(rc.bad), rc.bad)
	}
}

func (rc *pressingReceiver) arrivals() []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]time.Time(nil), rc.all...)
}

func subscribePressing(t *testing.T, env *testenv.Env, rc *pressingReceiver, extra map[string]any) models.WebhookCreated {
	t.Helper()
	body := map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}}
	for k, v := range extra {
		body[k] = v
	}
	hook := subscribe(t, env, nil, body)
	rc.trust(t, hook.Secret)
	return hook
}

// recordAt is when attempt n of the event to the subscription was made, by
// its delivery record.
func recordAt(t *testing.T, env *testenv.Env, sub, ev uuid.UUID, n int) time.Time {
	t.Helper()
	rec, err := env.Store.Deliveries().Find(t.Context(), sub, ev, n)
	if err != nil {
		t.Fatalf("record of attempt %d: %v", n, err)
	}
	return rec.DateCreated
}

// A 429 with Retry-After: 30 delays that subscription's next attempt by
// 30 s, later than its schedule's 1 s, and holds back its other events as
// long; another subscription's failure of the same event is retried on
// schedule, and its other events go at once.
func TestBackPressureRetryAfterDelaysOnlyThatSubscription(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second, 40 * time.Second} })
	var once sync.Once
	pressing := newPressingReceiver(t, func(w http.ResponseWriter, _ int) {
		first := false
		once.Do(func() { first = true })
		if first {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	failing := newPressingReceiver(t, func(w http.ResponseWriter, nth int) {
		if nth == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	a := subscribePressing(t, env, pressing, nil)
	b := subscribePressing(t, env, failing, nil)

	ev1 := publish(t, env, "test.created", map[string]any{"n": 1})
	// Once the 429 is recorded, a second event: A is paused, B is not.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := env.Store.Deliveries().Find(t.Context(), a.ID, ev1.ID, 1); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no record of the first attempt to A within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ev2 := publish(t, env, "test.created", map[string]any{"n": 2})

	awaitDelivery(t, env, ev1.ID, 90*time.Second, nil)
	awaitDelivery(t, env, ev2.ID, 90*time.Second, nil)
	pressing.check(t)
	failing.check(t)

	a1, a2 := recordAt(t, env, a.ID, ev1.ID, 1), recordAt(t, env, a.ID, ev1.ID, 2)
	if gap := a2.Sub(a1); gap < 30*time.Second || gap > 40*time.Second {
		t.Errorf("A's attempt 2 came %v after its 429 with Retry-After: 30; want 30 s (the schedule says 1 s)", gap)
	}
	b1, b2 := recordAt(t, env, b.ID, ev1.ID, 1), recordAt(t, env, b.ID, ev1.ID, 2)
	if gap := b2.Sub(b1); gap < 900*time.Millisecond || gap > 6*time.Second {
		t.Errorf("B's attempt 2 came %v after its 500; the schedule says 1 s", gap)
	}
	// The second event: held back from A until the pause ended (its one
	// attempt, made then, is number 1), sent to B at once.
	if at := recordAt(t, env, a.ID, ev2.ID, 1); at.Sub(a1) < 30*time.Second {
		t.Errorf("A got the second event %v after the 429; the pause lasts 30 s", at.Sub(a1))
	}
	if at := recordAt(t, env, b.ID, ev2.ID, 1); at.Sub(a1) > 10*time.Second {
		t.Errorf("B got the second event %v after A's 429; A's pause must not hold it", at.Sub(a1))
	}
	if _, err := env.Store.Deliveries().Find(t.Context(), a.ID, ev2.ID, 2); err == nil {
		t.Errorf("the second event has a second attempt to A: its throttled attempts were recorded or numbered")
	}
}

// rateLimitPerSecond 2 on a subscription: ten events published at once
// reach the receiver no faster than two at once and two a second after
// (GCRA, burst = the rate), and every one arrives.
func TestBackPressureRateLimit(t *testing.T) {
	env := testenv.Start(t)
	rc := newPressingReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusNoContent) })
	subscribePressing(t, env, rc, map[string]any{"rateLimitPerSecond": 2})
	var ids []uuid.UUID
	for i := range 10 {
		ids = append(ids, publish(t, env, "test.created", map[string]any{"n": i}).ID)
	}
	for _, id := range ids {
		awaitDelivery(t, env, id, 60*time.Second, nil)
	}
	rc.check(t)
	got := rc.arrivals()
	if len(got) != 10 {
		t.Fatalf("the receiver got %d requests, want 10", len(got))
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Before(got[j]) })
	// In any stretch of L seconds at most 2 + 2L sends, plus one for the
	// workflows' timers landing a reserved send next to another.
	for i := range got {
		for j := i + 1; j < len(got); j++ {
			span := got[j].Sub(got[i]).Seconds()
			if n := j - i + 1; float64(n) > 2+2*span+1 {
				t.Errorf("%d requests within %.2f s at 2 per second (burst 2): %v", n, span, offsets(got))
				return
			}
		}
	}
	if span := got[9].Sub(got[0]); span < 3500*time.Millisecond {
		t.Errorf("ten requests in %v; 2 per second needs 4 s after the burst", span)
	}
}

func offsets(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(ts[0]).Round(10 * time.Millisecond).String()
	}
	return out
}
