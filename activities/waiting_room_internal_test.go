package activities

import (
	"strconv"
	"testing"
	"time"
)

// The room counts each waiter once, forgets it once admitted or past its
// wait and grace, learns a queue's hold only once it has had a refusal, and
// uses the requests in flight until then.
func TestWaitingRoomCountsItsCrowd(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := &waitingRoom{now: func() time.Time { return now }}
	if got := r.crowd("s/a", "t0", 10, 0); got != 0 {
		t.Fatalf("crowd with no hold known: %v, want 0", got)
	}
	// A queue with no refusal is not kept: a fast subscription costs nothing.
	r.held("s/a", 10*time.Second)
	if len(r.queues) != 0 {
		t.Fatalf("a hold made %d queues, want 0", len(r.queues))
	}
	for i := range 30 {
		r.waiting("s/a", "t"+strconv.Itoa(i), time.Minute)
	}
	// Its requests in flight give the hold until one ends: 30 × 4 s ÷ 10.
	if got := r.crowd("s/a", "t0", 10, 4*time.Second); got != 12*time.Second {
		t.Fatalf("crowd of 30 behind requests 4 s under way: %v, want 12s", got)
	}
	r.held("s/a", 10*time.Second)
	// Asked again, a waiter counts once: 30 × 10 s ÷ 10 slots, the ended
	// hold now known, whatever is in flight.
	r.waiting("s/a", "t0", time.Minute)
	if got := r.crowd("s/a", "t0", 10, 19*time.Second); got != 30*time.Second {
		t.Fatalf("crowd of 30 for a waiter among them: %v, want 30s", got)
	}
	if got := r.crowd("s/a", "new", 10, 0); got != 31*time.Second {
		t.Fatalf("crowd of 30 for a newcomer: %v, want 31s", got)
	}
	// The hold is a moving average: an eighth of the way to each new one.
	r.held("s/a", 2*time.Second)
	if got := r.crowd("s/a", "new", 10, 0); got != 31*9*time.Second/10 {
		t.Fatalf("crowd of 30 after a 2 s hold: %v, want %v", got, 31*9*time.Second/10)
	}
	for i := range 10 {
		r.admitted("s/a", "t"+strconv.Itoa(i))
	}
	if got := r.crowd("s/a", "new", 10, 0); got != 21*9*time.Second/10 {
		t.Fatalf("crowd after 10 admitted: %v, want %v", got, 21*9*time.Second/10)
	}
	if got := r.crowd("s/a", "new", 0, 0); got != 0 {
		t.Fatalf("crowd with no slots: %v, want 0", got)
	}
	// Another queue's crowd is its own.
	r.waiting("w/b", "t0", time.Second)
	r.held("w/b", time.Second)
	if got := r.crowd("w/b", "t0", 1, 0); got != time.Second {
		t.Fatalf("another queue: %v, want 1s", got)
	}
	now = now.Add(time.Minute + roomGrace + time.Second)
	if got := r.crowd("s/a", "new", 10, 0); got != 9*time.Second/10 {
		t.Fatalf("crowd once every wait is over: %v, want its own 0.9s", got)
	}
	if r.waiters != 0 {
		t.Fatalf("room holds %d waiters, want 0", r.waiters)
	}
	// Far past any slot's hold, the crowd's wait stays within its bound.
	r.waiting("s/c", "x", time.Second)
	r.held("s/c", time.Hour)
	if got := r.crowd("s/c", "x", 1, 0); got != crowdWaitMax {
		t.Fatalf("crowd behind hour-long holds: %v, want %v", got, crowdWaitMax)
	}
}

// The whole room is swept once a minute: queues nobody waits in and no
// request ended in for roomIdle go, whatever their size; past its bounds
// the room counts no more, and waits fall back to the backoff.
func TestWaitingRoomSweepsAndStaysBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := &waitingRoom{now: func() time.Time { return now }}
	r.waiting("s/idle", "t", time.Second)
	r.waiting("s/busy", "t", time.Hour)
	r.held("s/busy", time.Second)
	now = now.Add(roomIdle + time.Minute)
	r.crowd("s/other", "x", 1, 0)
	if _, ok := r.queues["s/idle"]; ok {
		t.Fatal("an idle queue survived the sweep")
	}
	if _, ok := r.queues["s/busy"]; !ok {
		t.Fatal("a queue with a waiter was swept")
	}
	if r.waiters != 1 {
		t.Fatalf("room holds %d waiters, want 1", r.waiters)
	}
	for i := len(r.queues); i < roomQueuesMax; i++ {
		r.waiting("s/"+strconv.Itoa(i), "t", time.Hour)
	}
	r.waiting("s/one-too-many", "t", time.Hour)
	if len(r.queues) != roomQueuesMax {
		t.Fatalf("room holds %d queues, want at most %d", len(r.queues), roomQueuesMax)
	}
	if _, ok := r.queues["s/one-too-many"]; ok {
		t.Fatal("a queue past roomQueuesMax was made")
	}
	r.waiters = roomWaitersMax
	r.waiting("s/busy", "new", time.Hour)
	if _, ok := r.queues["s/busy"].waiting["new"]; ok || r.waiters != roomWaitersMax {
		t.Fatalf("a waiter past roomWaitersMax was counted (%d)", r.waiters)
	}
}
