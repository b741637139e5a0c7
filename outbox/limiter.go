package outbox

import (
	"slices"
	"sync"
	"time"
)

// StartLimiter is the events relay's admission control: how many workflow
// starts it makes at once, halved while Temporal answers them slowly and
// grown by one while it answers in time (additive increase, multiplicative
// decrease, on the p90 of the starts of each window; at once when a start
// runs out of time). The relay applies it by the size of its claims: each
// claimer claims its share of the limit and makes the whole wave at once,
// so the claimers' starts in flight exceed the limit by one at most (for a
// wave claimed before a decrease, by half the new limit), and what a claim
// puts first waits for one wave at most. The quiet lane's few starts
// (QuietQueue) are outside the limit.
//
// Why it exists: a Temporal server saturated by one workspace's flood
// serves every start, and the tasks behind it, first come first served
// (its history shards' queues have no fairness), so a quiet workspace's
// event, put first by the outbox's turns, still waited seconds behind the
// flood's starts (issue 28: p99 2.0-3.2 s during a flood at the rate
// limit). Admitting only what Temporal answers in time was to keep the
// flood's backlog in the outbox, where workspaces take turns.
//
// Why it is opt-in (OUTBOX_START_TARGET; off, the relay makes up to
// DefaultParallelism starts at once): measured, it buys throughput, not
// isolation (docs/benchmarks.md#admission-into-temporal-issue-28).
//
// Why not a library's adaptive limiter: failsafe-go's (a gradient limiter
// against a moving baseline) moves its limit by one per window of a second
// or more after smoothing over five, so it takes half a minute to come
// down from 32, longer than a flood; and a baseline learnt under load
// takes the overload for normal.
type StartLimiter struct {
	mu      sync.Mutex
	limit   int
	ceiling int
	// epoch counts the decreases: a wave claimed before the last one was
	// sized by a higher limit, and its times say nothing of this one.
	epoch      uint64
	window     []time.Duration
	windowFrom time.Time // its first sample's arrival
	target     time.Duration
}

// The limiter's settings. DefaultStartTarget (the value OUTBOX_START_TARGET
// suggests) is far above a start's time on an idle server (15-25 ms here)
// and a small part of the 1 s a quiet workspace's event may take end to
// end. It is a setting, not learnt from the fastest start seen: a worker
// started during a flood would learn the flood's times as normal. A window is 16 starts
// (a claimer's wave at the ceiling, one wave of both at the floor), and
// no older than startWindowAge, so a flood's last starts do not decide a
// window minutes later.
//
// The floor is half the ceiling because the starts' time is not all ours:
// during a flood or beside slow receivers, Temporal's own server was busy
// with the work of events admitted before (their retries and throttled
// attempts above all), and its starts took 0.4-1 s however few we made.
// Fewer starts then only admit fewer events, and a quiet workspace,
// served every other turn, falls behind in the outbox: with a floor of 2,
// B's p50 during the flood was 11 s; with 8, 6 s (and a third of the slow
// neighbour's events were still undispatched at the end); with 16,
// 1.2 s alone against 1.4 s with the fixed 32, but 4.6 s when a burst's
// backlog was still draining beside it. What the limit buys is
// throughput: 16 starts at once instead of 32 contend less inside
// Temporal (scenario 1 on its own server 1.30 -> 1.72-2.23 x T).
const (
	DefaultStartTarget = 200 * time.Millisecond
	startWindow        = 16
	startWindowAge     = 10 * time.Second
	minStartLimit      = DefaultParallelism / 2
)

// NewStartLimiter halves the limit while the p90 of a window misses target
// (DefaultStartTarget if 0). It starts at DefaultParallelism, the relay's
// fixed width before it, which it never exceeds.
func NewStartLimiter(target time.Duration) *StartLimiter {
	if target <= 0 {
		target = DefaultStartTarget
	}
	return &StartLimiter{limit: DefaultParallelism, ceiling: DefaultParallelism, target: target}
}

// Limit is how many starts may be in flight now.
func (l *StartLimiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// share is how many changes one of sharing claimers may claim now, and the
// epoch to report their wave under.
func (l *StartLimiter) share(sharing int) (int, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return (l.limit + sharing - 1) / sharing, l.epoch
}

// report adds the times of a finished wave's starts, claimed under epoch
// (every call of the wave has ended, so its slowest are not left out),
// and whether one of them ran out of time: that halves the limit at once,
// as its batch-mates were cut short and their times are lost.
func (l *StartLimiter) report(epoch uint64, took []time.Duration, timedOut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if epoch != l.epoch {
		return
	}
	if timedOut {
		l.decrease()
		return
	}
	if len(l.window) == 0 || time.Since(l.windowFrom) > startWindowAge {
		l.window, l.windowFrom = l.window[:0], time.Now()
	}
	l.window = append(l.window, took...)
	if len(l.window) < startWindow {
		return
	}
	slices.Sort(l.window)
	p90 := l.window[len(l.window)*9/10]
	l.window = l.window[:0]
	if p90 > l.target {
		l.decrease()
		return
	}
	l.limit = min(l.ceiling, l.limit+1)
}

// decrease halves the limit, down to the floor, and starts a new epoch if
// it moved (at the floor, the waves in flight are sized as the next ones).
func (l *StartLimiter) decrease() {
	l.window = l.window[:0]
	if next := max(minStartLimit, l.limit/2); next < l.limit {
		l.limit = next
		l.epoch++
	}
}
