package activities

import (
	"sync"
	"time"
)

// waitingRoom sizes the wait of an attempt refused a slot by the crowd
// refused before it. Every recheck of a throttled attempt is a round trip
// through Temporal (a timer and a workflow task, and for a regular attempt
// its activity task), so rechecks on a fixed backoff grow with the crowd: a
// workspace whose slow receivers hold their slots for 10 s had thousands of
// attempts waiting and kept the Temporal server rechecking them, for 10
// attempts a second of real work, and every other workspace's workflows
// waited behind those rechecks. An attempt refused now waits about as long
// as the attempts counted waiting in its queue take to be served (waiting
// × how long a slot is held ÷ slots), so the queue's rechecks come about as
// fast as its slots free, however many wait.
//
// A queue is one subscription's in-flight slots ("s/" + its ID) or one
// workspace's share of this worker ("w/" + its ID), made by its first
// refusal. The room is per worker process: with N workers each sees about
// 1/N of a subscription's crowd, and the rechecks are at most N times its
// slots' pace. The zero value is ready.
type waitingRoom struct {
	now func() time.Time

	mu      sync.Mutex
	queues  map[string]*waitQueue
	waiters int
	swept   time.Time
}

// waitQueue is one queue's waiting attempts (each to when it stops being
// counted) and how long its slots are held (a moving average; 0 until a
// request ends after the queue's first refusal).
type waitQueue struct {
	waiting map[string]time.Time
	held    time.Duration
	used    time.Time
	swept   time.Time
}

const (
	// roomWaitersMax and roomQueuesMax bound the room's memory; past them
	// waits fall back to the backoff alone.
	roomWaitersMax = 200_000
	roomQueuesMax  = 16_384
	// roomGrace keeps a waiter counted past its wait, for the timer's and
	// the workflow task's delay before it asks again.
	roomGrace = 30 * time.Second
	// roomIdle drops a queue nobody waits in and no slot was held in since;
	// roomSweep is how often the whole room is swept for them (a queue's
	// own waiters are swept when its crowd is asked, at most once a second).
	roomIdle  = 10 * time.Minute
	roomSweep = time.Minute
	// crowdWaitMax bounds a crowd's wait: the waits already given are not
	// shortened when a receiver speeds up again, so this is how long its
	// backlog may lag behind its recovery (the default schedule's second
	// wait).
	crowdWaitMax = 5 * time.Minute
)

func (r *waitingRoom) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// held records that a slot of queue was held for d (an attempt's request),
// once the queue has had a refusal.
func (r *waitingRoom) held(queue string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[queue]
	if q == nil {
		return
	}
	q.used = r.clock()
	if q.held == 0 {
		q.held = max(d, time.Millisecond)
		return
	}
	q.held += (d - q.held) / 8
}

// crowd is how long the attempts waiting in queue, task counted among them,
// take to be served by its slots, each held for the queue's recent holds,
// or while none has ended, for minHold (how long its requests in flight
// have taken so far: a receiver's first slow requests are long under way
// before any of them ends); 0 while no hold is known.
func (r *waitingRoom) crowd(queue, task string, slots int, minHold time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	r.sweepAll(now)
	hold, n := minHold, 1
	if q := r.queues[queue]; q != nil {
		if q.held > 0 {
			hold = q.held
		}
		q.sweep(r, now)
		n = len(q.waiting)
		if _, ok := q.waiting[task]; !ok {
			n++
		}
	}
	if hold <= 0 || slots <= 0 {
		return 0
	}
	return min(time.Duration(n)*hold/time.Duration(slots), crowdWaitMax)
}

// waiting counts task in queue until its wait is over (and a grace).
func (r *waitingRoom) waiting(queue, task string, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	q := r.queues[queue]
	if q == nil {
		if len(r.queues) >= roomQueuesMax {
			return
		}
		if r.queues == nil {
			r.queues = map[string]*waitQueue{}
		}
		q = &waitQueue{waiting: map[string]time.Time{}}
		r.queues[queue] = q
	}
	q.used = now
	if _, ok := q.waiting[task]; !ok {
		if r.waiters >= roomWaitersMax {
			return
		}
		r.waiters++
	}
	q.waiting[task] = now.Add(wait + roomGrace)
}

// admitted: task has its slot in queue and waits no more.
func (r *waitingRoom) admitted(queue, task string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.queues[queue]; q != nil {
		if _, ok := q.waiting[task]; ok {
			delete(q.waiting, task)
			r.waiters--
		}
	}
}

// sweepAll forgets, at most once per roomSweep, the waiters past their wait
// and the queues left idle: waiters admitted on another worker, or whose
// delivery ended, are counted no longer than their wait and grace.
func (r *waitingRoom) sweepAll(now time.Time) {
	if now.Sub(r.swept) < roomSweep {
		return
	}
	r.swept = now
	for k, q := range r.queues {
		q.swept = time.Time{}
		if q.sweep(r, now); len(q.waiting) == 0 && now.Sub(q.used) > roomIdle {
			delete(r.queues, k)
		}
	}
}

// sweep forgets the queue's waiters past their wait, at most once a second.
func (q *waitQueue) sweep(r *waitingRoom, now time.Time) {
	if now.Sub(q.swept) < time.Second {
		return
	}
	q.swept = now
	for task, until := range q.waiting {
		if now.After(until) {
			delete(q.waiting, task)
			r.waiters--
		}
	}
}
