package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// quietQueue is a backlog (changes 1..flood) whose starts each take a
// second, as on a Temporal server busy with a neighbour's flood, and one
// quiet change (0) that arrives once both claimers have a wave in flight.
// Like the events outbox, either lane may claim the quiet change.
type quietQueue struct {
	ignoreOutcomes
	mu      sync.Mutex
	next    int
	flood   int
	claims  int
	quiet   bool // arrived, not yet claimed
	arrived time.Time
	began   time.Time // the quiet change's start began
}

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
		go func() {
			time.Sleep(100 * time.Millisecond)
			q.mu.Lock()
			q.quiet, q.arrived = true, time.Now()
			q.mu.Unlock()
		}()
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
	wait := time.Second
	if c == 0 {
		q.mu.Lock()
		q.began = time.Now()
		q.mu.Unlock()
		wait = time.Millisecond
	}
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A quiet change that arrives while the claimers' waves are in flight is
// started by the quiet lane beside them, within its polling, not after a
// wave's slowest start: the benchmark's quiet workspace waited 1.2 s at
// p50 in the outbox during a neighbour's flood on Temporal's own server.
func TestQuietLaneStartsBesideTheWaves(t *testing.T) {
	q := &quietQueue{flood: 4 * outbox.SweepBatch}
	r := outbox.Relay[int]{Queue: q}
	done := make(chan error, 1)
	go func() {
		_, err := r.Drain(context.Background())
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the drain did not end")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.began.IsZero() {
		t.Fatal("the quiet change was never started")
	}
	if waited := q.began.Sub(q.arrived); waited > 400*time.Millisecond {
		t.Fatalf("the quiet change waited %v for its start, want well under a wave's second", waited)
	}
}
