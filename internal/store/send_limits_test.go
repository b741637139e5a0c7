package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// sendFixture is a subscription and two store handles on one database,
// each with its own connection pool: two worker replicas.
type sendFixture struct {
	ctx        context.Context
	a, b       *store.Store
	sub, other uuid.UUID
}

func newSendFixture(t testing.TB) *sendFixture {
	t.Helper()
	dsn := pgtest.NewURL(t)
	open := func() *store.Store {
		db, err := store.Open(dsn, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return store.New(db)
	}
	f := &sendFixture{ctx: context.Background(), a: open(), b: open()}
	ws, err := f.a.Bootstrap(f.ctx, "One", "one-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []*uuid.UUID{&f.sub, &f.other} {
		w, err := f.a.Webhooks().Create(f.ctx, uuid.New(), models.NewWebhook{
			WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
			EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		}, []byte{1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		*id = w.ID
	}
	return f
}

func (f *sendFixture) setRate(t testing.TB, perSecond int) {
	t.Helper()
	if _, err := f.a.DB().ExecContext(f.ctx, `UPDATE webhook_subscriptions SET rate_limit_per_second = ? WHERE id = ?`, perSecond, f.sub); err != nil {
		t.Fatal(err)
	}
}

func (f *sendFixture) acquire(t *testing.T, st *store.Store, sub, key uuid.UUID, max int, lease time.Duration) store.SendGrant {
	t.Helper()
	g, err := st.SendLimits().Acquire(f.ctx, sub, store.SendLease{Key: key, MaxInFlight: max, Duration: lease})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Two replicas, eight senders each, never hold more than the limit in
// flight between them, and do reach it.
func TestSendLimitsInFlightAcrossReplicas(t *testing.T) {
	f := newSendFixture(t)
	const limit = 3
	var inFlight, most, granted, refused atomic.Int64
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		st := f.a
		if i%2 == 1 {
			st = f.b
		}
		wg.Go(func() {
			for time.Now().Before(deadline) {
				key := uuid.New()
				g, err := st.SendLimits().Acquire(f.ctx, f.sub, store.SendLease{Key: key, MaxInFlight: limit, Duration: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if !g.OK {
					if g.Reason != store.ThrottledInFlight || g.Wait <= 0 || g.Wait > time.Minute {
						errs <- fmt.Errorf("refused: %+v", g)
						return
					}
					refused.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				granted.Add(1)
				n := inFlight.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(5 * time.Millisecond) // the send
				inFlight.Add(-1)
				if err := st.SendLimits().Release(f.ctx, f.sub, key); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("granted %d, refused %d, most in flight %d", granted.Load(), refused.Load(), most.Load())
	if most.Load() > limit {
		t.Fatalf("%d in flight at once, limit %d", most.Load(), limit)
	}
	if most.Load() < limit || refused.Load() == 0 {
		t.Fatalf("the limit was never reached (most %d, refused %d): the test proves nothing", most.Load(), refused.Load())
	}
	// Every lease was released: the other subscription was never touched,
	// and this one has room for the whole limit again.
	for range limit {
		if g := f.acquire(t, f.b, f.sub, uuid.New(), limit, time.Minute); !g.OK {
			t.Fatalf("after every release: %+v", g)
		}
	}
}

// A lease ends on its own (a crashed worker's slot frees itself), a
// release frees it at once, and a repeated run of the same attempt takes
// its own lease again rather than a second one.
func TestSendLimitsLeases(t *testing.T) {
	f := newSendFixture(t)
	k1, k2, k3 := uuid.New(), uuid.New(), uuid.New()
	if g := f.acquire(t, f.a, f.sub, k1, 1, time.Second); !g.OK {
		t.Fatalf("first: %+v", g)
	}
	if g := f.acquire(t, f.b, f.sub, k1, 1, time.Second); !g.OK {
		t.Fatalf("the same attempt again: %+v", g)
	}
	g := f.acquire(t, f.b, f.sub, k2, 1, time.Second)
	if g.OK || g.Reason != store.ThrottledInFlight || g.Wait <= 0 || g.Wait > time.Second {
		t.Fatalf("second attempt while the first holds the only slot: %+v", g)
	}
	if g := f.acquire(t, f.b, f.other, k2, 1, time.Second); !g.OK {
		t.Fatalf("another subscription: %+v", g)
	}
	time.Sleep(g.Wait + 50*time.Millisecond) // k1's worker "crashed": its lease runs out
	if g := f.acquire(t, f.b, f.sub, k2, 1, time.Minute); !g.OK {
		t.Fatalf("after the lease expired: %+v", g)
	}
	if g := f.acquire(t, f.a, f.sub, k3, 1, time.Minute); g.OK {
		t.Fatalf("k2 holds the slot: %+v", g)
	}
	if err := f.a.SendLimits().Release(f.ctx, f.sub, k2); err != nil {
		t.Fatal(err)
	}
	if g := f.acquire(t, f.a, f.sub, k3, 1, time.Minute); !g.OK {
		t.Fatalf("after the release: %+v", g)
	}
	if err := f.a.SendLimits().Release(f.ctx, f.sub, k2); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
	if _, err := f.a.SendLimits().Acquire(f.ctx, uuid.New(), store.SendLease{Key: k1, MaxInFlight: 1, Duration: time.Second}); err != models.ErrNotFound {
		t.Fatalf("unknown subscription: %v", err)
	}
}

// With 5 per second, senders on two replicas that wait as told get at
// most 5 at once and then 5 a second: over 3 s, at most 5*3+5.
func TestSendLimitsRate(t *testing.T) {
	f := newSendFixture(t)
	f.setRate(t, 5)
	start := time.Now()
	window := start.Add(3 * time.Second)
	var granted atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		st := f.a
		if i%2 == 1 {
			st = f.b
		}
		wg.Go(func() {
			key := uuid.New()
			for time.Now().Before(window) {
				g, err := st.SendLimits().Acquire(f.ctx, f.sub, store.SendLease{Key: key, MaxInFlight: 100, Duration: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if !g.OK {
					if g.Reason != store.ThrottledRate || g.Wait <= 0 || g.Wait > 2*time.Second {
						errs <- fmt.Errorf("refused: %+v", g)
						return
					}
					time.Sleep(g.Wait) // as the workflow does, then the same attempt again
					continue
				}
				if time.Now().Before(window) {
					granted.Add(1)
				}
				if err := st.SendLimits().Release(f.ctx, f.sub, key); err != nil {
					errs <- err
					return
				}
				key = uuid.New() // the next event
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := granted.Load()
	t.Logf("%d sends in %v at 5/s", n, window.Sub(start))
	if n > 5*3+5 {
		t.Fatalf("%d sends in 3 s at 5 per second (burst 5): at most 20 allowed", n)
	}
	if n < 15 {
		t.Fatalf("only %d sends in 3 s at 5 per second", n)
	}
}

// A refused attempt keeps the instant reserved for it: asking again before
// then is told the same wait, later attempts queue behind it, and it is
// let through when the time comes.
func TestSendLimitsRateReservation(t *testing.T) {
	f := newSendFixture(t)
	f.setRate(t, 2) // burst 2, then one every 500 ms
	k := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	start := time.Now()
	for i := range 2 {
		if g := f.acquire(t, f.a, f.sub, k[i], 10, time.Minute); !g.OK {
			t.Fatalf("burst %d: %+v", i, g)
		}
	}
	told := time.Now() // no later than the database's clock when it answered
	g2 := f.acquire(t, f.b, f.sub, k[2], 10, time.Minute)
	// Its instant is 500 ms after the burst's first send: the wait is
	// that less the time the three calls took (long under -race on a
	// loaded machine).
	if g2.OK || g2.Reason != store.ThrottledRate || g2.Wait < 500*time.Millisecond-time.Since(start) || g2.Wait > 500*time.Millisecond {
		t.Fatalf("third: %+v after %v", g2, time.Since(start))
	}
	again := f.acquire(t, f.a, f.sub, k[2], 10, time.Minute)
	if again.OK || again.Wait > g2.Wait || again.Wait < g2.Wait-time.Since(told) {
		t.Fatalf("third again: %+v, first told %v", again, g2.Wait)
	}
	g3 := f.acquire(t, f.a, f.sub, k[3], 10, time.Minute)
	if g3.OK || g3.Wait < g2.Wait+500*time.Millisecond-time.Since(told) {
		t.Fatalf("fourth queues behind the third: %+v (third %v)", g3, g2.Wait)
	}
	time.Sleep(again.Wait)
	if g := f.acquire(t, f.b, f.sub, k[2], 10, time.Minute); !g.OK {
		t.Fatalf("third at its time: %+v", g)
	}
	// Unlimited again: no wait at all.
	f.setRate(t, 10000)
	if _, err := f.a.DB().ExecContext(f.ctx, `UPDATE webhook_subscriptions SET rate_limit_per_second = NULL WHERE id = ?`, f.sub); err != nil {
		t.Fatal(err)
	}
	if g := f.acquire(t, f.a, f.sub, uuid.New(), 10, time.Minute); !g.OK {
		t.Fatalf("unlimited: %+v", g)
	}
}

// record records a failed attempt 1 of a new event to the fixture's
// subscription, with opts' lease and pause.
func (f *sendFixture) record(t testing.TB, s *store.Store, opts store.RecordOptions) models.WebhookDelivery {
	t.Helper()
	var ws uuid.UUID
	if err := s.DB().QueryRowContext(f.ctx, `SELECT workspace_id FROM webhook_subscriptions WHERE id = ?`, f.sub).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	ev, err := s.Events().Create(f.ctx, models.NewEvent{WorkspaceID: ws, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	code := 429
	rec := models.WebhookDelivery{SubscriptionID: f.sub, EventID: ev.ID, AttemptNumber: 1, StatusCode: &code}
	if _, err := s.Deliveries().RecordAttempt(f.ctx, rec, opts); err != nil {
		t.Fatal(err)
	}
	return rec
}

// A pause, stored with an attempt's record (a receiver's Retry-After),
// holds back every attempt of that subscription, none of another, is never
// shortened by a shorter one, and ends on time.
func TestSendLimitsPause(t *testing.T) {
	f := newSendFixture(t)
	held := uuid.New()
	if g := f.acquire(t, f.a, f.sub, held, 10, time.Minute); !g.OK {
		t.Fatalf("before: %+v", g)
	}
	paused := time.Now()
	f.record(t, f.a, store.RecordOptions{Pause: 1500 * time.Millisecond})
	f.record(t, f.b, store.RecordOptions{Pause: time.Millisecond})
	g := f.acquire(t, f.b, f.sub, uuid.New(), 10, time.Minute)
	if g.OK || g.Reason != store.ThrottledPaused || g.Wait < 1500*time.Millisecond-time.Since(paused) || g.Wait > 1500*time.Millisecond {
		t.Fatalf("paused: %+v", g)
	}
	if g := f.acquire(t, f.b, f.sub, held, 10, time.Minute); g.OK || g.Reason != store.ThrottledPaused {
		t.Fatalf("a lease taken before the pause is no way round it: %+v", g)
	}
	if g := f.acquire(t, f.b, f.other, uuid.New(), 10, time.Minute); !g.OK {
		t.Fatalf("another subscription: %+v", g)
	}
	time.Sleep(g.Wait + 50*time.Millisecond)
	if g := f.acquire(t, f.b, f.sub, uuid.New(), 10, time.Minute); !g.OK {
		t.Fatalf("after the pause: %+v", g)
	}
}

// An attempt's record gives its send lease back in the same statement,
// also when an earlier run of the attempt had recorded it; a record with
// no lease gives back none.
func TestRecordAttemptReleasesItsLease(t *testing.T) {
	f := newSendFixture(t)
	first, second := uuid.New(), uuid.New()
	for _, k := range []uuid.UUID{first, second} {
		if g := f.acquire(t, f.a, f.sub, k, 2, time.Minute); !g.OK {
			t.Fatalf("acquire: %+v", g)
		}
	}
	if g := f.acquire(t, f.b, f.sub, uuid.New(), 2, time.Minute); g.OK || g.Reason != store.ThrottledInFlight {
		t.Fatalf("both slots held: %+v", g)
	}
	f.record(t, f.a, store.RecordOptions{})
	if g := f.acquire(t, f.b, f.sub, uuid.New(), 2, time.Minute); g.OK {
		t.Fatalf("a record without a lease released one: %+v", g)
	}
	rec := f.record(t, f.a, store.RecordOptions{Lease: &first})
	third := uuid.New()
	if g := f.acquire(t, f.b, f.sub, third, 2, time.Minute); !g.OK {
		t.Fatalf("after the record gave its lease back: %+v", g)
	}
	// A second run of that attempt finds its record and still gives its
	// own lease back.
	if r, err := f.b.Deliveries().RecordAttempt(f.ctx, rec, store.RecordOptions{Lease: &second}); err != nil || r.Wrote {
		t.Fatalf("recording again: %+v, %v", r, err)
	}
	if g := f.acquire(t, f.b, f.sub, uuid.New(), 2, time.Minute); !g.OK {
		t.Fatalf("after the second run gave its lease back: %+v", g)
	}
}

// AttemptStateAcquire acquires exactly once, and only when the attempt
// would send.
func TestDeliveriesAttemptStateAcquire(t *testing.T) {
	f := newSendFixture(t)
	var ws uuid.UUID
	if err := f.a.DB().QueryRowContext(f.ctx, `SELECT workspace_id FROM webhook_subscriptions WHERE id = ?`, f.sub).Scan(&ws); err != nil {
		t.Fatal(err)
	}
	ev, err := f.a.Events().Create(f.ctx, models.NewEvent{WorkspaceID: ws, Type: models.EventTestCreated, Data: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	lease := func(attempt int) store.SendLease {
		return store.SendLease{Key: store.SendKey(ev.ID, attempt), MaxInFlight: 2, Duration: time.Minute}
	}
	st, err := f.a.Deliveries().AttemptStateAcquire(f.ctx, f.sub, ev.ID, 1, lease(1))
	if err != nil || st.Grant == nil || !st.Grant.OK || !st.TargetFound || !st.EventFound || st.Event.Data == nil {
		t.Fatalf("attempt 1: %+v, %v", st, err)
	}
	// One lease taken, not one per column: one more fits, then none.
	if g := f.acquire(t, f.b, f.sub, uuid.New(), 2, time.Minute); !g.OK {
		t.Fatalf("second slot: %+v", g)
	}
	st, err = f.a.Deliveries().AttemptStateAcquire(f.ctx, f.sub, ev.ID, 2, lease(2))
	if err != nil || st.Grant == nil || st.Grant.OK || st.Grant.Reason != store.ThrottledInFlight || st.Grant.Wait <= 0 {
		t.Fatalf("attempt 2 with both slots taken: %+v, %v", st.Grant, err)
	}
	// Recorded: nothing acquired.
	if _, _, err := f.a.Deliveries().Record(f.ctx, models.WebhookDelivery{SubscriptionID: f.sub, EventID: ev.ID, AttemptNumber: 1, Success: true}); err != nil {
		t.Fatal(err)
	}
	if st, err = f.a.Deliveries().AttemptStateAcquire(f.ctx, f.sub, ev.ID, 1, lease(1)); err != nil || st.Existing == nil || st.Grant != nil {
		t.Fatalf("recorded attempt: %+v, %v", st, err)
	}
	// Disabled, or the event gone: nothing acquired.
	if st, err = f.a.Deliveries().AttemptStateAcquire(f.ctx, f.sub, uuid.New(), 1, lease(1)); err != nil || st.EventFound || st.Grant != nil {
		t.Fatalf("no event: %+v, %v", st, err)
	}
	if _, err := f.a.Webhooks().Update(f.ctx, ws, f.sub, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	if st, err = f.a.Deliveries().AttemptStateAcquire(f.ctx, f.sub, ev.ID, 3, lease(3)); err != nil || st.Grant != nil {
		t.Fatalf("disabled: %+v, %v", st, err)
	}
	if st, err = f.a.Deliveries().AttemptStateAcquire(f.ctx, uuid.New(), ev.ID, 1, lease(1)); err != nil || st.TargetFound || st.Grant != nil {
		t.Fatalf("no subscription: %+v, %v", st, err)
	}
}

func TestSendKey(t *testing.T) {
	ev := uuid.New()
	first, again := store.SendKey(ev, 1), store.SendKey(ev, 1)
	if first != again || first == store.SendKey(ev, 2) || first == store.SendKey(uuid.New(), 1) {
		t.Fatal("SendKey must name one attempt of one event, the same every time")
	}
}
