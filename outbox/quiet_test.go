package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// quietQueue is a backlog (changes 1..flood) and one quiet change (0) that
// arrives once both claimers have claimed a wave. The first sweep's calls
// return at once; every later backlog call is held until the quiet change
// has begun its start (or escape passes), as starts on a Temporal server
// busy with a neighbour's flood take seconds. Like the events outbox,
// either lane may claim the quiet change.
type quietQueue struct {
	ignoreOutcomes
	mu      sync.Mutex
	next    int
	flood   int
	claims  int
	quiet   bool // arrived, not yet claimed
	starts  int  // of the quiet change
	escaped bool // a backlog call gave up waiting for the quiet change
	began   chan struct{}
}

const escape = 3 * time.Second

func (q *quietQueue) Name() string { return "quiet" }

func (q *quietQueue) Claim(_ context.Context, limit int, _ time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []int
	if q.quiet {
		batch, q.quiet = append(batch, 0), false
	}
	for len(batch) < limit && q.next < q.flood {
		q.next++
		batch = append(batch, q.next)
	}
	if q.claims++; q.claims == 3 { // the first sweep's, then one per claimer
		q.quiet = true
	}
	return batch, nil
}

func (q *quietQueue) ClaimQuiet(context.Context, int, time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.quiet {
		return nil, nil
	}
	q.quiet = false
	return []int{0}, nil
}

func (q *quietQueue) Send(ctx context.Context, c int) error {
	switch {
	case c == 0:
		q.mu.Lock()
		if q.starts++; q.starts == 1 {
			close(q.began)
		}
		q.mu.Unlock()
	case c > outbox.SweepBatch:
		select {
		case <-q.began:
		case <-time.After(escape):
			q.mu.Lock()
			q.escaped = true
			q.mu.Unlock()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// A quiet change that arrives while the claimers' waves are in flight is
// started by the quiet lane beside them, not after a wave's slowest start:
// here the waves end only once it has begun. Without the lane they waited
// out the escape (the benchmark's quiet workspace waited 1.2 s at p50 in
// the outbox during a neighbour's flood on Temporal's own server).
func TestQuietLaneStartsBesideTheWaves(t *testing.T) {
	q := &quietQueue{flood: 4 * outbox.SweepBatch, began: make(chan struct{})}
	r := outbox.Relay[int]{Queue: q}
	sent, err := r.Drain(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.starts != 1 || sent != q.flood+1 {
		t.Fatalf("the quiet change started %d times, %d sent; want once, and all %d", q.starts, sent, q.flood+1)
	}
	if q.escaped {
		t.Fatalf("the waves in flight waited %v for the quiet change: it was started only after them", escape)
	}
}
