package activities_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
)

type shareClock struct{ t time.Time }

// sub is the subscription of the tests' attempts, but where one says otherwise.
var sub = uuid.New()

func (c *shareClock) now() time.Time { return c.t }

func newShare(c *shareClock) *activities.WorkspaceShare {
	return &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 4, Slow: 1, Now: c.now}
}

// takeAll takes n tasks of ws and returns their tickets, failing t if one is refused.
func takeAll(t *testing.T, s *activities.WorkspaceShare, ws uuid.UUID, prefix string, n int) []*activities.ShareTicket {
	t.Helper()
	var tickets []*activities.ShareTicket
	for i := range n {
		ticket, ok := s.Take(ws, sub, prefix+strconv.Itoa(i))
		if !ok {
			t.Fatalf("%s%d refused", prefix, i)
		}
		ticket.Sending()
		tickets = append(tickets, ticket)
	}
	return tickets
}

// A workspace whose attempts answer within the budget holds up to Max
// tasks; attempts of a task it holds share its slot; another workspace
// keeps its own share.
func TestWorkspaceShareFastWorkspace(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := newShare(c)
	a, b := uuid.New(), uuid.New()
	dones := takeAll(t, s, a, "a", 4)
	if _, ok := s.Take(a, sub, "a4"); ok {
		t.Fatal("a fifth task admitted past Max 4")
	}
	again, ok := s.Take(a, sub, "a0")
	if !ok {
		t.Fatal("a second attempt of a held task refused")
	}
	takeAll(t, s, b, "b", 4)
	c.t = c.t.Add(500 * time.Millisecond)
	dones[0].Done(10 * time.Millisecond)
	if _, ok := s.Take(a, sub, "a5"); ok {
		t.Fatal("a task freed while another of its attempts is in flight")
	}
	again.Done(10 * time.Millisecond)
	if s.IsSlow(a) {
		t.Fatal("a is slow after attempts within the budget")
	}
	if _, ok := s.Take(a, sub, "a5"); !ok {
		t.Fatal("refused with a slot free")
	}
}

// An attempt in flight past the budget makes its workspace slow at once:
// it is held to Slow tasks, and stays slow for the cool-down after its
// slow attempt ended; other workspaces are unaffected.
func TestWorkspaceShareSlowWorkspace(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := newShare(c)
	a, b := uuid.New(), uuid.New()
	dones := takeAll(t, s, a, "a", 2)
	c.t = c.t.Add(1100 * time.Millisecond)
	if !s.IsSlow(a) {
		t.Fatal("a task in flight past the budget does not make a slow")
	}
	if _, ok := s.Take(a, sub, "a2"); ok {
		t.Fatal("a slow workspace holding 2 tasks took a third (Slow 1)")
	}
	takeAll(t, s, b, "b", 4)
	dones[0].Done(1100 * time.Millisecond)
	dones[1].Done(1100 * time.Millisecond)
	a3, ok := s.Take(a, sub, "a3")
	if !ok {
		t.Fatal("a slow workspace holding nothing refused its one task")
	}
	a3.Sending()
	if _, ok := s.Take(a, sub, "a4"); ok {
		t.Fatal("a workspace that was slow took two tasks during its cool-down")
	}
	// Past the cool-down, a3, in flight for a minute, keeps a slow.
	c.t = c.t.Add(time.Minute + time.Millisecond)
	if !s.IsSlow(a) {
		t.Fatal("a task in flight past the budget no longer makes a slow")
	}
}

// After the cool-down with nothing in flight past the budget, a workspace
// is fast again and may hold Max tasks.
func TestWorkspaceShareCoolsDown(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := newShare(c)
	a := uuid.New()
	ticket, _ := s.Take(a, sub, "slow")
	ticket.Sending()
	c.t = c.t.Add(2 * time.Second)
	ticket.Done(2 * time.Second)
	if !s.IsSlow(a) {
		t.Fatal("not slow after a slow attempt")
	}
	c.t = c.t.Add(time.Minute)
	if s.IsSlow(a) {
		t.Fatal("still slow after the cool-down")
	}
	takeAll(t, s, a, "a", 4)
}

// A nil share admits everything.
func TestWorkspaceShareNil(t *testing.T) {
	var s *activities.WorkspaceShare
	for i := range 100 {
		ticket, ok := s.Take(uuid.Nil, uuid.Nil, strconv.Itoa(i))
		if !ok {
			t.Fatal("nil share refused")
		}
		ticket.Done(time.Second)
	}
}

// Slowness is the attempts', not their task's: an attempt that joins a
// task held for a while starts its own clock, and one whose request took
// less than the budget (its database work aside) makes nothing slow.
func TestWorkspaceShareSlowByAttempt(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := newShare(c)
	a := uuid.New()
	first, _ := s.Take(a, sub, "task")
	first.Sending()
	c.t = c.t.Add(900 * time.Millisecond)
	second, _ := s.Take(a, sub, "task")
	second.Sending()
	first.Done(900 * time.Millisecond)
	c.t = c.t.Add(900 * time.Millisecond)
	if s.IsSlow(a) {
		t.Fatal("an attempt in flight 900 ms made its workspace slow because its task is older")
	}
	c.t = c.t.Add(200 * time.Millisecond)
	if !s.IsSlow(a) {
		t.Fatal("an attempt in flight 1.1 s did not make its workspace slow")
	}
	second.Done(200 * time.Millisecond)
	if s.IsSlow(a) {
		t.Fatal("slow after every attempt ended with a request under the budget")
	}
}

// With RefuseSlowSubscriptions (the local share), a slow subscription's
// attempts are refused even when its workspace holds nothing, while
// another subscription of the same workspace is admitted up to Max.
func TestWorkspaceShareRefusesSlowSubscriptions(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := &activities.WorkspaceShare{Budget: time.Second, CoolDown: time.Minute, Max: 4, Slow: 4, RefuseSlowSubscriptions: true, Now: c.now}
	a, slowSub, fastSub := uuid.New(), uuid.New(), uuid.New()
	stalled, _ := s.Take(a, slowSub, "event-1")
	// Database time before the request does not count...
	c.t = c.t.Add(1100 * time.Millisecond)
	if s.SubscriptionSlow(a, slowSub) {
		t.Fatal("an attempt not yet sending made its subscription slow")
	}
	// ... the request's does.
	stalled.Sending()
	c.t = c.t.Add(1100 * time.Millisecond)
	if _, ok := s.Take(a, slowSub, "event-2"); ok {
		t.Fatal("a subscription with an attempt in flight past the budget was admitted")
	}
	for i := range 3 {
		if _, ok := s.Take(a, fastSub, "event-f"+strconv.Itoa(i)); !ok {
			t.Fatalf("a fast subscription of a slow workspace refused at %d of Max 4 tasks", i+1)
		}
	}
	stalled.Done(1100 * time.Millisecond)
	if _, ok := s.Take(a, slowSub, "event-3"); ok {
		t.Fatal("a subscription cooling down was admitted")
	}
	c.t = c.t.Add(time.Minute + time.Millisecond)
	if _, ok := s.Take(a, slowSub, "event-4"); !ok {
		t.Fatal("a subscription past its cool-down refused")
	}
}

// Full says whether a task not yet held would be refused; Sending is how
// long the subscription's longest request in flight has been under way.
func TestWorkspaceShareFullAndSending(t *testing.T) {
	c := &shareClock{t: time.Unix(1e9, 0)}
	s := newShare(c)
	ws := uuid.New()
	if s.Full(ws) || s.Sending(ws, sub) != 0 {
		t.Fatalf("an unknown workspace: full %v, sending %v", s.Full(ws), s.Sending(ws, sub))
	}
	held := takeAll(t, s, ws, "t", 1)
	c.t = c.t.Add(500 * time.Millisecond)
	later, _ := s.Take(ws, sub, "u")
	later.Sending()
	if s.Full(ws) {
		t.Fatal("full with 2 of 4 tasks, none slow")
	}
	if got := s.Sending(ws, sub); got != 500*time.Millisecond {
		t.Fatalf("sending %v, want the oldest request's 500ms", got)
	}
	if got := s.Sending(ws, uuid.New()); got != 0 {
		t.Fatalf("another subscription sending %v, want 0", got)
	}
	// Past the budget, the workspace is slow and holds more than Slow.
	c.t = c.t.Add(time.Second)
	if !s.Full(ws) {
		t.Fatal("not full: slow, holding 2 tasks where Slow is 1")
	}
	for _, tk := range append(held, later) {
		tk.Done(0)
	}
	if s.Full(ws) || s.Sending(ws, sub) != 0 {
		t.Fatalf("all done: full %v, sending %v", s.Full(ws), s.Sending(ws, sub))
	}
}

// Nil shares admit everything and know of nothing in flight.
func TestWorkspaceShareNilFullAndSending(t *testing.T) {
	var s *activities.WorkspaceShare
	if s.Full(uuid.New()) || s.Sending(uuid.New(), sub) != 0 {
		t.Fatal("a nil share is full or sending")
	}
}
