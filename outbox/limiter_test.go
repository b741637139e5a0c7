package outbox_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// loadQueue is a backlog of changes (1..n) in front of a server at its
// capacity: each call takes perCall for every call in flight when it
// arrives (so the server answers a fixed number a second however many it
// is given, and more in flight only means longer waits), or fast once
// recovered is set.
type loadQueue struct {
	ignoreOutcomes
	mu        sync.Mutex
	next, n   int
	perCall   time.Duration
	recovered bool
	inFlight  int
	// Per call, in the order they began: calls in flight as it began, and
	// how long it took.
	began []int
	took  []time.Duration
}

func (q *loadQueue) Name() string { return "load" }

func (q *loadQueue) Claim(_ context.Context, limit int, _ time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []int
	for len(batch) < limit && q.next < q.n {
		q.next++
		batch = append(batch, q.next)
	}
	return batch, nil
}

func (q *loadQueue) Send(ctx context.Context, _ int) error {
	q.mu.Lock()
	q.inFlight++
	d := time.Duration(q.inFlight) * q.perCall
	switch {
	case q.recovered:
		d = time.Millisecond
	}
	q.began = append(q.began, q.inFlight)
	i := len(q.took)
	q.took = append(q.took, 0)
	q.mu.Unlock()
	start := time.Now()
	defer func() {
		q.mu.Lock()
		q.inFlight--
		q.took[i] = time.Since(start)
		q.mu.Unlock()
	}()
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Against a server whose answers slow down with the calls it is given, the
// relay keeps few starts in flight and each is answered near the target
// (what a quiet workspace's event, put first in the next claim, waits for),
// where a fixed 32 in flight made every start wait 32 calls' time (320 ms
// here), and it still sends the whole backlog.
func TestRelayAdmitsWhatTemporalAnswersInTime(t *testing.T) {
	q := &loadQueue{n: 480, perCall: 10 * time.Millisecond} // 100 calls/s
	r := outbox.Relay[int]{Queue: q, Limiter: outbox.NewStartLimiter(0)}
	sent, err := r.Drain(context.Background())
	if err != nil || sent != q.n {
		t.Fatalf("drain: sent %d, error %v; want %d", sent, err, q.n)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	// The second half, once the limit has come down.
	began, took := q.began[q.n/2:], slices.Clone(q.took[q.n/2:])
	slices.Sort(took)
	if most := slices.Max(began); most > 22 {
		t.Errorf("up to %d calls in flight once the limit came down (limit now %d), want at most 22", most, r.Limiter.Limit())
	}
	if p90 := took[len(took)*9/10]; p90 > 250*time.Millisecond {
		t.Errorf("calls answered in p90 %v once the limit came down, want near the 200 ms target", p90)
	}
}

// Once the server answers fast again, the limit climbs back to the relay's
// full width, so a flood that has passed leaves no lasting cost.
func TestStartLimitRecovers(t *testing.T) {
	q := &loadQueue{n: 100, perCall: 20 * time.Millisecond}
	r := outbox.Relay[int]{Queue: q, Limiter: outbox.NewStartLimiter(0)}
	if _, err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := r.Limiter.Limit(); l > outbox.DefaultParallelism/2 {
		t.Fatalf("limit %d after a slow server, want it down", l)
	}
	q.mu.Lock()
	q.recovered, q.n = true, q.n+5000
	q.mu.Unlock()
	if _, err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := r.Limiter.Limit(); l != outbox.DefaultParallelism {
		t.Errorf("limit %d after 5000 fast calls, want %d", l, outbox.DefaultParallelism)
	}
}

// Each claim is its claimer's share of the limit, so a change put ahead of
// a backlog waits for about one wave of each claimer (4 + 4 at a limit of
// 8, its own wave-mates, whose goroutines may begin first, and slack for
// a descheduled goroutine: 15), not for claims of sweepBatch (at least
// the 16 claimed just before it).
func TestRelayClaimsItsShareOfTheLimit(t *testing.T) {
	const limit = 8
	q := &floodQueue{flood: 20 * outbox.SweepBatch}
	r := outbox.Relay[int]{Queue: q, Limiter: outbox.StartLimiterAt(limit)}
	if _, err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	at := slices.Index(q.started, 0)
	if at < 0 {
		t.Fatal("the urgent change was never sent")
	}
	if ahead, most := at-q.startedBeforeUrgent, 2*limit-1; ahead > most {
		t.Fatalf("%d flood changes started between the urgent change's arrival and its own start; want at most %d", ahead, most)
	}
}
