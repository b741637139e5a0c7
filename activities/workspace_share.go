package activities

import (
	"sync"
	"time"

	"github.com/google/uuid"
)

// WorkspaceShare bounds the slots of a worker one workspace's attempts hold.
// A slot is a task: a workflow task for local first attempts (all of one
// event's recipients share it), an activity task for regular attempts. Any
// workspace may hold at most Max tasks with attempts in flight; a slow one,
// at most Slow. A subscription is slow while one of its attempts has been
// in flight longer than Budget, and for CoolDown after a request took
// longer; a workspace is slow while one of its subscriptions is. With
// RefuseSlowSubscriptions, a slow subscription's attempts are refused
// outright, so they never hold a task a fast recipient of the same event
// shares.
//
// A local first attempt holds its workflow task's slot for as long as the
// receiver takes: refused, it becomes a regular activity, which holds an
// activity slot instead (a slow subscription's, once its send limits admit
// it: refused there, or with its workspace's regular share full, it is
// throttled). A regular attempt refused is throttled and made again later,
// as when its subscription's limits refuse it.
//
// The share is per worker process: N workers give a workspace at most N×Slow
// slow tasks. A nil *WorkspaceShare admits everything.
type WorkspaceShare struct {
	Budget, CoolDown        time.Duration
	Max, Slow               int
	RefuseSlowSubscriptions bool
	// Now is the clock; tests may pin it.
	Now func() time.Time

	mu        sync.Mutex
	byWS      map[uuid.UUID]*shareState
	ticket    uint64
	lastSweep time.Time
}

// shareState is one workspace's tasks and subscriptions with attempts in
// flight, and its subscriptions cooling down.
type shareState struct {
	tasks map[string]int // task → its attempts in flight
	subs  map[uuid.UUID]*subState
}

// subState is one subscription's attempts in flight (their starts) and
// the end of its cool-down.
type subState struct {
	attempts  map[uint64]time.Time
	slowUntil time.Time
}

// ShareTicket is one attempt admitted by a WorkspaceShare.
type ShareTicket struct {
	s       *WorkspaceShare
	ws, sub uuid.UUID
	task    string
	id      uint64
}

// shareSweepAt is the number of workspaces held beyond which Take also
// drops, once per CoolDown, those with nothing in flight and no cool-down
// left (a workspace's Done drops its own).
const shareSweepAt = 1024

// Take admits an attempt of subscription sub of workspace ws in task unless
// the share refuses it; the ticket's Done frees it.
func (s *WorkspaceShare) Take(ws, sub uuid.UUID, task string) (*ShareTicket, bool) {
	if s == nil {
		return nil, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.byWS == nil {
		s.byWS = map[uuid.UUID]*shareState{}
	}
	if len(s.byWS) > shareSweepAt && now.Sub(s.lastSweep) > s.CoolDown {
		s.lastSweep = now
		s.sweep(now)
	}
	st := s.byWS[ws]
	if st == nil {
		st = &shareState{tasks: map[string]int{}, subs: map[uuid.UUID]*subState{}}
		s.byWS[ws] = st
	}
	if s.RefuseSlowSubscriptions && s.subSlow(st.subs[sub], now) {
		return nil, false
	}
	if _, held := st.tasks[task]; !held && s.full(st, now) {
		return nil, false
	}
	st.tasks[task]++
	ss := st.subs[sub]
	if ss == nil {
		ss = &subState{attempts: map[uint64]time.Time{}}
		st.subs[sub] = ss
	}
	s.ticket++
	ss.attempts[s.ticket] = time.Time{} // not sending yet: Sending starts its clock
	return &ShareTicket{s: s, ws: ws, sub: sub, task: task, id: s.ticket}, true
}

// Sending starts the attempt's clock as its request goes out, so the
// database work before it never makes a subscription slow.
func (t *ShareTicket) Sending() {
	if t == nil {
		return
	}
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if st := t.s.byWS[t.ws]; st != nil {
		if ss := st.subs[t.sub]; ss != nil {
			if _, ok := ss.attempts[t.id]; ok {
				ss.attempts[t.id] = t.s.now()
			}
		}
	}
}

// SubscriptionSlow reports whether sub of ws is slow by this share's count.
func (s *WorkspaceShare) SubscriptionSlow(ws, sub uuid.UUID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[ws]
	return st != nil && s.subSlow(st.subs[sub], s.now())
}

// Done frees the attempt's part of its task. sent is how long its request
// took (0: none was sent); past Budget, its subscription, and so its
// workspace, is slow for CoolDown.
func (t *ShareTicket) Done(sent time.Duration) {
	if t == nil {
		return
	}
	s := t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[t.ws]
	if st == nil {
		return
	}
	now := s.now()
	if n := st.tasks[t.task] - 1; n > 0 {
		st.tasks[t.task] = n
	} else {
		delete(st.tasks, t.task)
	}
	if ss := st.subs[t.sub]; ss != nil {
		delete(ss.attempts, t.id)
		if sent > s.Budget {
			ss.slowUntil = now.Add(s.CoolDown)
		}
	}
	// The workspace's subscriptions idle past their cool-down go, this one
	// or another, so a workspace that was slow once is not kept for good.
	for sub, ss := range st.subs {
		if len(ss.attempts) == 0 && !now.Before(ss.slowUntil) {
			delete(st.subs, sub)
		}
	}
	if len(st.tasks) == 0 && len(st.subs) == 0 {
		delete(s.byWS, t.ws)
	}
}

// Full reports whether ws holds all the tasks it may, so a task of it not
// yet held would be refused.
func (s *WorkspaceShare) Full(ws uuid.UUID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[ws]
	return st != nil && s.full(st, s.now())
}

// full reports whether st holds all the tasks its workspace may: Max, or
// Slow while it is slow. Take refuses a task not yet held on it; Full
// tells callers so before they ask.
func (s *WorkspaceShare) full(st *shareState, now time.Time) bool {
	n := len(st.tasks)
	return n >= s.Max || (n >= s.Slow && s.slow(st, now))
}

// Sending is how long the longest request of sub of ws in flight has been
// under way (0: none).
func (s *WorkspaceShare) Sending(ws, sub uuid.UUID) time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[ws]
	if st == nil || st.subs[sub] == nil {
		return 0
	}
	now := s.now()
	var longest time.Duration
	for _, started := range st.subs[sub].attempts {
		if !started.IsZero() {
			longest = max(longest, now.Sub(started))
		}
	}
	return longest
}

// slots is how many tasks ws may hold now: Slow while it is slow, else Max.
func (s *WorkspaceShare) slots(ws uuid.UUID) int {
	if s == nil {
		return 0
	}
	if s.IsSlow(ws) {
		return s.Slow
	}
	return s.Max
}

// IsSlow reports whether ws is slow now.
func (s *WorkspaceShare) IsSlow(ws uuid.UUID) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[ws]
	return st != nil && s.slow(st, s.now())
}

// slow: one of the workspace's subscriptions is. Scanned only when a
// workspace holds Slow tasks or more, so a quiet one costs nothing.
func (s *WorkspaceShare) slow(st *shareState, now time.Time) bool {
	for _, ss := range st.subs {
		if s.subSlow(ss, now) {
			return true
		}
	}
	return false
}

func (s *WorkspaceShare) subSlow(ss *subState, now time.Time) bool {
	if ss == nil {
		return false
	}
	if now.Before(ss.slowUntil) {
		return true
	}
	for _, started := range ss.attempts {
		if !started.IsZero() && now.Sub(started) > s.Budget {
			return true
		}
	}
	return false
}

// sweep drops the subscriptions, then the workspaces, that hold nothing.
func (s *WorkspaceShare) sweep(now time.Time) {
	for ws, st := range s.byWS {
		for sub, ss := range st.subs {
			if len(ss.attempts) == 0 && !now.Before(ss.slowUntil) {
				delete(st.subs, sub)
			}
		}
		if len(st.tasks) == 0 && len(st.subs) == 0 {
			delete(s.byWS, ws)
		}
	}
}

func (s *WorkspaceShare) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
