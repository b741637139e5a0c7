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
// at most Slow. A workspace is slow while one of its tasks has had attempts
// in flight longer than Budget, and for CoolDown after an attempt took
// longer. A workspace whose receivers answer within Budget is held back only
// at Max, so a lone busy tenant keeps most of the worker.
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

	mu   sync.Mutex
	byWS map[uuid.UUID]*shareState
}

// shareState is one workspace's tasks with attempts in flight.
type shareState struct {
	tasks     map[string]*shareTask
	slowUntil time.Time
}

// shareTask is one slot: how many attempts hold it, and since when.
type shareTask struct {
	n     int
	since time.Time
}

// shareSweepAt is the number of workspaces held beyond which Take also drops
// those with nothing in flight and no cool-down left.
const shareSweepAt = 1024

// Take admits an attempt of workspace ws in task unless ws already holds its
// share of tasks. done, called once the attempt ended, frees the task's slot
// with its last attempt and notes whether the attempt was slow.
func (s *WorkspaceShare) Take(ws uuid.UUID, task string) (done func(), ok bool) {
	if s == nil {
		return func() {}, true
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
		st = &shareState{tasks: map[string]*shareTask{}}
		s.byWS[ws] = st
	}
	t := st.tasks[task]
	if t == nil {
		if n := len(st.tasks); n >= s.Max || (n >= s.Slow && s.slow(st, now)) {
			return nil, false
		}
		t = &shareTask{since: now}
		st.tasks[task] = t
	}
	t.n++
	return func() { s.done(ws, task, now) }, true
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

func (s *WorkspaceShare) slow(st *shareState, now time.Time) bool {
	if now.Before(st.slowUntil) {
		return true
	}
	for _, t := range st.tasks {
		if now.Sub(t.since) > s.Budget {
			return true
		}
	}
	return false
}

func (s *WorkspaceShare) done(ws uuid.UUID, task string, started time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byWS[ws]
	if st == nil {
		return
	}
	now := s.now()
	if now.Sub(started) > s.Budget {
		st.slowUntil = now.Add(s.CoolDown)
	}
	if t := st.tasks[task]; t != nil {
		if t.n--; t.n <= 0 {
			delete(st.tasks, task)
		}
	}
	if len(st.tasks) == 0 && !now.Before(st.slowUntil) {
		delete(s.byWS, ws)
	}
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
