package api

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/openlayer-ai/workspace-service/models"
)

// GET .../events returns each event's data in full, up to 256 KiB each, so
// a page of 100 can be ~26 MB while it is read and written. Every
// workspace shares the process: without a bound, one tenant's parallel
// reads (within its rate limit) can take gigabytes. The page budget bounds
// what all event-list requests of the process hold at once.
const (
	// eventPageBudgetBytes is the process's budget: about one worst-case
	// page of 100 (~75 MiB), or many pages of ordinary events.
	eventPageBudgetBytes = 128 << 20
	// eventPageBudgetWait is how long a request waits for room before it
	// is answered 503 unavailable with Retry-After: 1.
	eventPageBudgetWait = 10 * time.Second

	// eventDataReadMax is the most data a row can carry as read:
	// EventDataMax bounds the compact form, and PostgreSQL prints jsonb
	// with a space after every ',' and ':', at most one per two bytes
	// ([0,0,…]).
	eventDataReadMax = models.EventDataMax * 3 / 2
	// eventCostFactor is what a page holds per byte of data: the rows as
	// read, and the item being encoded (writePage encodes one at a time).
	eventCostFactor = 2
	// eventItemOverhead is the rest of an item: id, type, dateCreated and
	// their headers.
	eventItemOverhead = 512
)

// errPageBudget answers a request that found no room in the budget in
// time: the pages being written end within seconds, so retrying soon is
// likely to succeed.
var errPageBudget = &models.Error{
	Kind: models.ErrUnavailable, Code: "unavailable",
	Message: "the server is busy writing other large pages of events; retry after the Retry-After delay, or ask for a smaller perPage",
}

// eventPageCost is what a page of events is taken to hold in memory.
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

// pageBudget is a per-process weighted semaphore of bytes.
type pageBudget struct {
	sem  *semaphore.Weighted
	size int64
	wait time.Duration
}

func newPageBudget(size int64, wait time.Duration) *pageBudget {
	return &pageBudget{sem: semaphore.NewWeighted(size), size: size, wait: wait}
}

// reserve takes n bytes, waiting at most b.wait (or until ctx ends). n is
// capped at the whole budget, so a page always fits an idle budget. The
// error is errPageBudget.
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

// trim keeps n of the bytes held and gives the rest back at once, so that
// waiting requests need not wait for this one's response. Keeping more than
// is held keeps what is held: the reservation never grows.
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
