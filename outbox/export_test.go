package outbox

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// CountBacklogQueries makes c count each query it sends into n, and reuse
// a reading for ttl instead of BacklogTTL.
func CountBacklogQueries(c *BacklogCollector, n *atomic.Int64, ttl time.Duration) {
	read := c.read
	c.read = func(ctx context.Context, limit int) (store.Backlog, error) {
		n.Add(1)
		return read(ctx, limit)
	}
	c.ttl = ttl
}

// SweepBatch is how many changes a relay claims at once.
const SweepBatch = sweepBatch

// Sweep claims one batch (for the tests: a drain claims as calls return), sends it, marks what was sent, holds back each
// change whose call failed for itself and gives the rest back. A call
// failing for anything else (temporalDown) cancels the rest; its error is
// returned.
func (r Relay[T]) Sweep(ctx context.Context) (claimed, sent int, err error) {
	batch, err := r.Queue.Claim(ctx, sweepBatch, claimLease)
	if err != nil || len(batch) == 0 {
		return 0, 0, err
	}
	sent, err = r.process(ctx, batch, func() {}, func(error) {})
	return len(batch), sent, err
}
