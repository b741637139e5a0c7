package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/outbox"
)

// floodQueue is a backlog of flood changes (1..flood) that Claim hands out
// in order; after its third claim an urgent change (0) is put ahead of the
// rest, as the events outbox puts a test event or another workspace's
// event ahead of a backlog. Send records the order calls begin.
type floodQueue struct {
	ignoreOutcomes
	mu      sync.Mutex
	next    int
	flood   int
	claims  int
	urgent  bool // waiting to be claimed
	started []int
	// startedBeforeUrgent is len(started) when the urgent change arrived.
	startedBeforeUrgent int
}

func (q *floodQueue) Name() string { return "flood" }

func (q *floodQueue) Claim(_ context.Context, limit int, _ time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []int
	if q.urgent {
		batch, q.urgent = append(batch, 0), false
	}
	for len(batch) < limit && q.next < q.flood {
		q.next++
		batch = append(batch, q.next)
	}
	if q.claims++; q.claims == 3 {
		q.urgent = true
		q.startedBeforeUrgent = len(q.started)
	}
	return batch, nil
}

func (q *floodQueue) Send(ctx context.Context, c int) error {
	q.mu.Lock()
	q.started = append(q.started, c)
	q.mu.Unlock()
	select { // a Temporal start under load
	case <-time.After(2 * time.Millisecond):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ignoreOutcomes is a test queue's Sent, Release and Failed, for queues
// whose tests look only at claims and calls.
type ignoreOutcomes struct{}

func (ignoreOutcomes) Sent(context.Context, []int) error    { return nil }
func (ignoreOutcomes) Release(context.Context, []int) error { return nil }
func (ignoreOutcomes) Failed(context.Context, int) (store.SendFailure, error) {
	return store.SendFailure{}, nil
}

// A change put ahead of a backlog is started behind at most the waves of
// Temporal calls already in flight (DefaultParallelism at a time, twice
// counting its own batch), not behind the rest of whole batches: with
// batches of 64 a test event or a quiet workspace's event waited for up to
// four waves of another workspace's starts per claimer (128 here; issue
// 18's noisy neighbour: 1.5 s at p50 on Temporal's own server, 0.76 s with
// batches of one wave).
func TestRelayStartsAnUrgentChangeWithinAWave(t *testing.T) {
	q := &floodQueue{flood: 20 * outbox.SweepBatch}
	r := outbox.Relay[int]{Queue: q}
	if _, err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	at := -1
	for i, c := range q.started {
		if c == 0 {
			at = i
		}
	}
	if at < 0 {
		t.Fatal("the urgent change was never sent")
	}
	if ahead, most := at-q.startedBeforeUrgent, 2*outbox.DefaultParallelism; ahead > most {
		t.Fatalf("%d flood changes started between the urgent change's arrival and its own start; want at most %d",
			ahead, most)
	}
}
