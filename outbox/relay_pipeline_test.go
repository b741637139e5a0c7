package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// tailQueue is a floodQueue whose every claim's first call hangs (a
// Temporal start in its long tail) until the urgent change has started, or
// for at most hang.
type tailQueue struct {
	*floodQueue
	hang     time.Duration
	mu       sync.Mutex
	slow     map[int]bool
	urgentGo chan struct{}
	once     sync.Once
	hung     int // calls that hung for all of hang
}

func (q *tailQueue) Claim(ctx context.Context, limit int, lease time.Duration) ([]int, error) {
	batch, err := q.floodQueue.Claim(ctx, limit, lease)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(batch) > 0 && batch[0] != 0 {
		q.slow[batch[0]] = true
	}
	return batch, err
}

func (q *tailQueue) Send(ctx context.Context, c int) error {
	if c == 0 {
		q.once.Do(func() { close(q.urgentGo) })
	}
	q.mu.Lock()
	slow := q.slow[c]
	q.mu.Unlock()
	if slow {
		select {
		case <-q.urgentGo:
		case <-time.After(q.hang):
			q.mu.Lock()
			q.hung++
			q.mu.Unlock()
		}
	}
	return q.floodQueue.Send(ctx, c)
}

// A change put ahead of a backlog is started while one call of every
// batch before it still hangs: the drain claims again as calls return,
// not when the slowest call of a batch has. Before, each claimer waited
// for its whole batch, so the urgent change waited out the hanging calls.
func TestRelayStartsAnUrgentChangeWhileCallsHang(t *testing.T) {
	q := &tailQueue{floodQueue: &floodQueue{flood: 20 * outbox.SweepBatch}, hang: 5 * time.Second,
		slow: map[int]bool{}, urgentGo: make(chan struct{})}
	r := outbox.Relay[int]{Queue: q}
	if _, err := r.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-q.urgentGo:
	default:
		t.Fatal("the urgent change was never sent")
	}
	if q.hung > 0 {
		t.Fatalf("%d hanging calls ran out their %v before the urgent change started: it waited for them", q.hung, q.hang)
	}
}
