package outbox

import (
	"context"
	"log/slog"
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
// The lane's starts are not the Limiter's: it neither sizes nor hears of
// them.
type QuietQueue[T any] interface {
	ClaimQuiet(ctx context.Context, limit int, lease time.Duration) ([]T, error)
}

// The quiet lane claims up to quietBatch at once, as many calls in flight
// (fewer if the relay's Parallelism is lower); with nothing to claim it
// looks again after quietPoll, doubling up to quietPollMax, and never
// sooner than quietIdleFactor times its last claim's time: a claim walks
// the workspaces with events pending (up to store.QuietWalk, one index
// probe and one count of at most a quiet workspace's few each), and many
// backlogs make the walk long.
const (
	quietBatch      = 8
	quietPoll       = 25 * time.Millisecond
	quietPollMax    = 200 * time.Millisecond
	quietIdleFactor = 4
)

// quietLane sweeps the quiet lane until drained is closed (the claimers
// found the backlog gone) or a start fails as the claimers' would (Temporal
// down), and counts what it sent. A claim that fails ends the lane alone:
// the lane is a shortcut, and the claimers still serve every event.
func (r Relay[T]) quietLane(ctx context.Context, drained <-chan struct{}, count func(int)) error {
	lane := r
	lane.Parallelism = min(quietBatch, r.parallelism())
	idle := quietPoll
	for {
		select {
		case <-drained:
			return nil
		default:
		}
		began := time.Now()
		claimed, sent, err := lane.sweep(ctx, wave{size: quietBatch, quiet: true})
		count(sent)
		if err != nil {
			if ctx.Err() != nil {
				return nil // the claimers failed or the relay stops: theirs to report
			}
			if claimed == 0 {
				r.logger().Warn("outbox: the quiet lane's claim failed; the claimers go on", slog.Any("error", err))
				return nil
			}
			return err
		}
		if claimed > 0 {
			idle = quietPoll
			continue
		}
		t := time.NewTimer(max(idle, quietIdleFactor*time.Since(began)))
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
