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

// StartLimiterAt is a StartLimiter held at n, at or below its floor: it
// never grows past n, and halving would not go below the floor.
func StartLimiterAt(n int) *StartLimiter {
	l := NewStartLimiter(0)
	l.limit, l.ceiling = n, n
	return l
}
