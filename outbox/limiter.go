package outbox

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// StartLimiter is the events relay's admission control: a limit on the
// workflow starts in flight that halves while Temporal answers them slowly
// and grows by one while it answers in time and the starts fill the limit
// (additive increase, multiplicative decrease, on the p90 of the starts of
// each window).
//
// Why: a Temporal server saturated by one workspace's flood serves every
// start, and the tasks behind it, first come first served (its history
// shards' queues have no fairness), so a quiet workspace's event, put first
// by the outbox's turns, still waited seconds behind the flood's starts and
// their work (issue 28: p99 2.6-4.2 s during a flood at the rate limit).
// Admitting only what Temporal answers in time keeps the flood's backlog
// in the outbox, where workspaces take turns, not in Temporal's queues.
//
// Why not a library's adaptive limiter: failsafe-go's (a gradient limiter
// against a moving baseline) moves its limit by one per window of a second
// or more after smoothing over five, so it takes half a minute to come
// down from 32, longer than a flood; and a baseline learnt under load
// takes the overload for normal.
type StartLimiter struct {
	mu       sync.Mutex
	limit    int
	inFlight int
	freed    chan struct{} // closed (and replaced) when a place may be free
	// The current window: the times of starts begun since the limit last
	// changed, and whether they filled the limit (claims are cut to it, so
	// filling it is how the limit holds the relay back).
	window     []time.Duration
	windowFrom time.Time
	full       bool
}

// The limiter's settings. The target is far above a start's time on an
// idle server (15-25 ms here, more across a network) and a small part of
// the 1 s a quiet workspace's event may take end to end; a window of 16
// starts is one claimer's wave. The floor is not one call per claimer:
// during a flood on Temporal's own server its starts took 0.4-0.7 s
// however few we made (its queues were busy with the work of the flood's
// events admitted before, their retries above all), so 2 in flight
// admitted about 4 events a second, and a quiet workspace publishing 5,
// served every other turn, fell behind (p50 11 s); with 8, 0.8 s.
const (
	startTarget   = 200 * time.Millisecond
	startWindow   = 16
	minStartLimit = 8
)

// NewStartLimiter starts at DefaultParallelism, the relay's fixed bound
// before it, which it never exceeds.
func NewStartLimiter() *StartLimiter {
	return &StartLimiter{limit: DefaultParallelism, freed: make(chan struct{}), windowFrom: time.Now()}
}

// Limit is how many starts may be in flight now.
func (l *StartLimiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// InFlight is how many starts are in flight now.
func (l *StartLimiter) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight
}

// acquire waits for a place under the limit, or for ctx to end.
func (l *StartLimiter) acquire(ctx context.Context) (time.Time, error) {
	for {
		l.mu.Lock()
		if l.inFlight < l.limit {
			l.inFlight++
			l.full = l.full || l.inFlight == l.limit
			l.mu.Unlock()
			return time.Now(), nil
		}
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// release gives a place back; a start begun at began counts toward the
// window when sample is set and it began in this window (one begun under
// an older limit says nothing of the new one).
func (l *StartLimiter) release(began time.Time, sample bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	if sample && !began.Before(l.windowFrom) {
		l.window = append(l.window, time.Since(began))
		if len(l.window) >= startWindow {
			l.adjust()
		}
	}
	close(l.freed)
	l.freed = make(chan struct{})
}

// adjust ends the window: half the limit when its p90 missed the target,
// one more when it met it and the starts filled the limit.
func (l *StartLimiter) adjust() {
	slices.Sort(l.window)
	p90 := l.window[len(l.window)*9/10]
	switch {
	case p90 > startTarget:
		l.limit = max(minStartLimit, l.limit/2)
	case l.full:
		l.limit = min(DefaultParallelism, l.limit+1)
	}
	l.window, l.windowFrom, l.full = l.window[:0], time.Now(), false
}

// callPermit is a call's place under a relay's limiter (zero: none).
type callPermit struct {
	l     *StartLimiter
	began time.Time
}

// permit waits for a place under r.Limiter; without one it returns at once.
func (r Relay[T]) permit(ctx context.Context) (callPermit, error) {
	if r.Limiter == nil {
		return callPermit{}, nil
	}
	began, err := r.Limiter.acquire(ctx)
	return callPermit{r.Limiter, began}, err
}

// done gives the place back. A call's time counts when it was answered or
// ran out of time (the clearest sign of an overloaded server); one that
// failed fast (Temporal down, the change refused, the drain stopped) says
// nothing of the server's load.
func (c callPermit) done(err error, ctx context.Context) {
	if c.l != nil {
		c.l.release(c.began, err == nil || errors.Is(ctx.Err(), context.DeadlineExceeded))
	}
}
