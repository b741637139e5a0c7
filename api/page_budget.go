package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/openlayer-ai/workspace-service/models"
)

// GET .../events returns each event's data in full (up to 256 KiB), so a
// page of 100 can hold ~26 MB, and one tenant's parallel reads could take
// gigabytes. The page budget bounds what all event-list requests of the
// process hold at once.
const (
	// eventPageBudgetBytes is about one worst-case page of 100 (~75 MiB).
	eventPageBudgetBytes = 128 << 20
	// eventPageBudgetWait is how long a request waits for room before a 503.
	eventPageBudgetWait = 10 * time.Second

	// eventDataReadMax is the most data a row can carry as read: PostgreSQL
	// prints jsonb with a space after every ',' and ':', at most one per two bytes.
	eventDataReadMax = models.EventDataMax * 3 / 2
	// eventCostFactor: each byte is held in the rows read and in the item
	// being encoded.
	eventCostFactor = 2
	// eventItemOverhead is the rest of an item: id, type, dateCreated.
	eventItemOverhead = 512
)

// errPageBudget is a 503: the pages being written end within seconds, so
// retrying soon is likely to succeed.
var errPageBudget = &models.Error{
	Kind: models.ErrUnavailable, Code: "unavailable",
	Message: "the server is busy writing other large pages of events; retry after the Retry-After delay, or ask for a smaller perPage",
}

func eventPageCost(items []models.EventDetail) int64 {
	var n int64
	for _, it := range items {
		n += eventCostFactor*int64(len(it.Data)) + eventItemOverhead
	}
	return n
}

// eventPageWorstCost is eventPageCost of a full page of the largest events.
func eventPageWorstCost(perPage int) int64 {
	return int64(perPage) * (eventCostFactor*eventDataReadMax + eventItemOverhead)
}

type pageBudget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func newPageBudget(size int64, wait time.Duration) *pageBudget {
	return &pageBudget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// reserve takes n bytes, capped at the whole budget so a page always fits an
// idle one, waiting at most b.wait. The error is errPageBudget.
func (b *pageBudget) reserve(ctx context.Context, n int64) (*pageReservation, error) {
	n = min(max(n, 0), b.size)
	ctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, errPageBudget
	}
	return &pageReservation{b: b, held: n}, nil
}

// pageReservation is bytes held from a pageBudget.
type pageReservation struct {
	b    *pageBudget
	mu   sync.Mutex
	held int64
}

// trim keeps n of the bytes held and gives the rest back at once, so waiting
// requests need not wait for this one's response; it never grows.
func (r *pageReservation) trim(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n = max(n, 0); n < r.held {
		r.b.sem.Release(r.held - n)
		r.held = n
	}
}

// release gives everything back; later calls do nothing.
func (r *pageReservation) release() { r.trim(0) }
