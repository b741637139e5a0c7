package outbox

import (
	"context"
	"time"
)

// QuietQueue is a Queue with a quiet lane: ClaimQuiet leases only the
// changes of owners with few pending (the events outbox: test events and
// the events of workspaces with few undispatched). While the claimers
// drain a backlog, the lane claims and starts these beside them, so an
// owner that publishes a few now and then waits for one Temporal call, not
// for the claimers' waves in flight ahead of it: each wave waits for its
// slowest call, and under a neighbour's flood a wave of starts took
// seconds on Temporal's own server (docs/operations.md#priorities-and-fairness).
type QuietQueue[T any] interface {
	ClaimQuiet(ctx context.Context, limit int, lease time.Duration) ([]T, error)
}

// The quiet lane claims up to quietBatch at once, as many calls in flight;
// with nothing to claim it looks again after quietPoll, doubling up to
// quietPollMax (a claim walks the workspaces with events pending, one
// index probe and one count of at most a quiet workspace's few each).
const (
	quietBatch   = 8
	quietPoll    = 25 * time.Millisecond
	quietPollMax = 200 * time.Millisecond
)

// quietLane sweeps the quiet lane until drained is closed (the claimers
// found the backlog gone) or a sweep fails, and counts what it sent.
func (r Relay[T]) quietLane(ctx context.Context, drained <-chan struct{}, count func(int)) error {
	lane := r
	lane.Parallelism = quietBatch
	idle := quietPoll
	for {
		select {
		case <-drained:
			return nil
		default:
		}
		claimed, sent, err := lane.sweep(ctx, wave{size: quietBatch, quiet: true})
		count(sent)
		if err != nil {
			return err
		}
		if claimed > 0 {
			idle = quietPoll
			continue
		}
		t := time.NewTimer(idle)
		select {
		case <-drained:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		idle = min(2*idle, quietPollMax)
	}
}
