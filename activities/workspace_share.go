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
// at most Slow. A workspace is slow while one of its attempts has been in
// flight longer than Budget, and for CoolDown after a request took longer.
//
// A local first attempt holds its workflow task's slot for as long as the
// receiver takes: refused, it becomes a regular activity, which holds an
// activity slot instead. A regular attempt refused is throttled and made
// again later, as when its subscription's limits refuse it.
//
// The share is per worker process: N workers give a workspace at most N×Slow
// slow tasks. A nil *WorkspaceShare admits everything.
type WorkspaceShare struct {
	Budget, CoolDown time.Duration
	Max, Slow        int
	// Now is the clock; tests may pin it.
	Now func() time.Time

	mu     sync.Mutex
	byWS   map[uuid.UUID]*shareState
	ticket uint64
}

// shareState is one workspace's tasks with attempts in flight.
type shareState struct {
	tasks     map[string]map[uint64]time.Time // task → its attempts' starts
	slowUntil time.Time
}

// ShareTicket is one attempt admitted by a WorkspaceShare.
type ShareTicket struct {
	s    *WorkspaceShare
	ws   uuid.UUID
	task string
	id   uint64
}

// shareSweepAt is the number of workspaces held beyond which Take also drops
// those with nothing in flight and no cool-down left.
const shareSweepAt = 1024

// Take admits an attempt of workspace ws in task unless ws already holds its
// share of tasks; the ticket's Done frees it.
func (s *WorkspaceShare) Take(ws uuid.UUID, task string) (*ShareTicket, bool) {
	if s == nil {
		return nil, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.byWS == nil {
		s.byWS = map[uuid.UUID]*shareState{}
	}
	if len(s.byWS) > shareSweepAt {
		s.sweep(now)
	}
	st := s.byWS[ws]
	if st == nil {
		st = &shareState{tasks: map[string]map[uint64]time.Time{}}
		s.byWS[ws] = st
	}
	attempts := st.tasks[task]
	if attempts == nil {
		if n := len(st.tasks); n >= s.Max || (n >= s.Slow && s.slow(st, now)) {
			return nil, false
		}
		attempts = map[uint64]time.Time{}
		st.tasks[task] = attempts
	}
	s.ticket++
	attempts[s.ticket] = now
	return &ShareTicket{s: s, ws: ws, task: task, id: s.ticket}, true
}

// Done frees the attempt's part of its task. sent is how long its request
// took (0: none was sent); past Budget, the workspace is slow for CoolDown.
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
	if sent > s.Budget {
		st.slowUntil = now.Add(s.CoolDown)
	}
	if attempts := st.tasks[t.task]; attempts != nil {
		delete(attempts, t.id)
		if len(attempts) == 0 {
			delete(st.tasks, t.task)
		}
	}
	if len(st.tasks) == 0 && !now.Before(st.slowUntil) {
		delete(s.byWS, t.ws)
	}
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

// slow scans the attempts in flight only when a workspace holds Slow tasks
// or more, so a quiet one costs nothing.
func (s *WorkspaceShare) slow(st *shareState, now time.Time) bool {
	if now.Before(st.slowUntil) {
		return true
	}
	for _, attempts := range st.tasks {
		for _, started := range attempts {
			if now.Sub(started) > s.Budget {
				return true
			}
		}
	}
	return false
}

func (s *WorkspaceShare) sweep(now time.Time) {
	for ws, st := range s.byWS {
		if len(st.tasks) == 0 && !now.Before(st.slowUntil) {
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
