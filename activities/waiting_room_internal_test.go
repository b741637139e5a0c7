package activities

import (
	"strconv"
	"testing"
	"time"
)

// The room counts each waiter once, forgets it once admitted or past its
// wait and grace, and knows nothing of a queue whose slots were never held.
func TestWaitingRoomCountsItsCrowd(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := &waitingRoom{now: func() time.Time { return now }}
	if got := r.crowd("s/a", "t0", 10, 0); got != 0 {
		t.Fatalf("crowd with no hold known: %v, want 0", got)
	}
	r.held("s/a", 10*time.Second)
	for i := range 30 {
		r.waiting("s/a", "t"+strconv.Itoa(i), time.Minute)
	}
	// Asked again, a waiter counts once: 30 × 10 s ÷ 10 slots.
	r.waiting("s/a", "t0", time.Minute)
	if got := r.crowd("s/a", "t0", 10, 0); got != 30*time.Second {
		t.Fatalf("crowd of 30 for a waiter among them: %v, want 30s", got)
	}
	if got := r.crowd("s/a", "new", 10, 0); got != 31*time.Second {
		t.Fatalf("crowd of 30 for a newcomer: %v, want 31s", got)
	}
	for i := range 10 {
		r.admitted("s/a", "t"+strconv.Itoa(i))
	}
	if got := r.crowd("s/a", "new", 10, 0); got != 21*time.Second {
		t.Fatalf("crowd after 10 admitted: %v, want 21s", got)
	}
	// Another queue's crowd is its own.
	r.held("w/b", time.Second)
	if got := r.crowd("w/b", "t0", 1, 0); got != time.Second {
		t.Fatalf("another queue: %v, want 1s", got)
	}
	now = now.Add(time.Minute + roomGrace + time.Second)
	if got := r.crowd("s/a", "new", 10, 0); got != time.Second {
		t.Fatalf("crowd once every wait is over: %v, want 1s (its own)", got)
	}
	if r.waiters != 0 {
		t.Fatalf("room holds %d waiters, want 0", r.waiters)
	}
	// With no hold ended yet, the attempts in flight give it: 30 waiting
	// behind requests 4 s under way, 10 slots.
	for i := range 30 {
		r.waiting("s/d", "t"+strconv.Itoa(i), time.Minute)
	}
	if got := r.crowd("s/d", "t0", 10, 4*time.Second); got != 12*time.Second {
		t.Fatalf("crowd of 30 behind requests 4 s under way: %v, want 12s", got)
	}
	if got := r.crowd("s/e", "x", 10, 0); got != 0 {
		t.Fatalf("crowd of a queue with no hold known or under way: %v, want 0", got)
	}
	// Far past any slot's hold, the crowd's wait stays within the workflow's bound.
	r.held("s/c", time.Hour)
	if got := r.crowd("s/c", "x", 1, 0); got != crowdWaitMax {
		t.Fatalf("crowd behind hour-long holds: %v, want %v", got, crowdWaitMax)
	}
}
