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

// Temporal down stops a drain's claims at its first failed call (a drain
// that claimed as calls returned once went on: 41 claims and 346 calls
// here), and the drain reports Temporal's error alone, not its batches'
// cancellations.
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
