package outbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/internal/store"
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
// not when the slowest call of a batch has.
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

// downQueue is an endless backlog whose every send finds Temporal down,
// after a moment (a call's round trip); marking is slow, as a database
// under load.
type downQueue struct {
	mu     sync.Mutex
	claims int
	sends  int
}

func (q *downQueue) Name() string { return "down" }
func (q *downQueue) Claim(_ context.Context, limit int, _ time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	return make([]int, limit), nil
}
func (q *downQueue) Send(context.Context, int) error {
	q.mu.Lock()
	q.sends++
	q.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	return serviceerror.NewUnavailable("connection refused")
}
func (q *downQueue) Sent(context.Context, []int) error { return nil }
func (q *downQueue) Release(context.Context, []int) error {
	time.Sleep(50 * time.Millisecond)
	return nil
}
func (q *downQueue) Failed(context.Context, int) (store.SendFailure, error) {
	return store.SendFailure{}, nil
}

// Temporal down stops a drain's claims at its first failed call, not once
// that call's batch has been given back (meanwhile a drain claimed and
// called on: 105 claims and 1,183 calls in a review's run), and the drain
// reports Temporal's error alone, not its batches' cancellations.
func TestRelayDrainStopsAtTheFirstCallTemporalRefuses(t *testing.T) {
	q := &downQueue{}
	_, err := outbox.Relay[int]{Queue: q}.Drain(context.Background())
	var unavailable *serviceerror.Unavailable
	if !errors.As(err, &unavailable) || strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("drain error %v, want Temporal's Unavailable alone", err)
	}
	if q.claims > 3 || q.sends > 3*outbox.SweepBatch {
		t.Fatalf("%d claims and %d calls after Temporal was down, want at most 3 claims", q.claims, q.sends)
	}
}
