package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
)

// The SDK's infos, reduced to the permit: eagerSlots reads nothing else.
type (
	reserveInfo struct{ sdkworker.SlotReservationInfo }
	markInfo    struct {
		sdkworker.SlotMarkUsedInfo
		p *sdkworker.SlotPermit
	}
	releaseInfo struct {
		sdkworker.SlotReleaseInfo
		p *sdkworker.SlotPermit
	}
)

func (m markInfo) Permit() *sdkworker.SlotPermit    { return m.p }
func (r releaseInfo) Permit() *sdkworker.SlotPermit { return r.p }

// An eager start takes a slot only while a poll of this worker has waited
// idlePoll for a task (the queue looks empty, so nothing queued is
// overtaken) and at most half the slots hold a task.
func TestEagerStartsOnlyWhileTheQueueLooksEmpty(t *testing.T) {
	s, err := newEagerSlots(8)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0)
	s.now = func() time.Time { return now }
	poll := func() *sdkworker.SlotPermit {
		t.Helper()
		p, err := s.ReserveSlot(context.Background(), reserveInfo{})
		if err != nil || p == nil {
			t.Fatalf("poller's slot: %v, %v", p, err)
		}
		return p
	}
	use := func(p *sdkworker.SlotPermit) { s.MarkSlotUsed(markInfo{p: p}) }
	release := func(p *sdkworker.SlotPermit) { s.ReleaseSlot(releaseInfo{p: p}) }
	eager := func() *sdkworker.SlotPermit { return s.TryReserveSlot(reserveInfo{}) }

	// Two polls just sent: they may come back with queued tasks at once.
	waiting := []*sdkworker.SlotPermit{poll(), poll()}
	if eager() != nil {
		t.Fatal("no poll has waited yet: eager start granted, maybe ahead of queued tasks")
	}
	now = now.Add(idlePoll)
	first := eager()
	if first == nil {
		t.Fatal("a poll waited 100 ms, no task busy: eager start refused")
	}
	use(first)
	// A backlog: each waiting poll comes back with a task and the pollers
	// poll again at once.
	for i, p := range waiting {
		use(p)
		waiting[i] = poll()
	}
	if eager() != nil {
		t.Fatal("polls answered at once (a backlog): eager start granted, ahead of the queue")
	}
	now = now.Add(idlePoll - time.Millisecond)
	if eager() != nil {
		t.Fatal("polls waiting 99 ms: eager start granted")
	}
	now = now.Add(time.Millisecond)
	if p := eager(); p == nil {
		t.Fatal("polls waiting 100 ms: eager start refused")
	} else {
		use(p)
	}
	// Four of eight busy (first, two polled tasks, one eager): the queue
	// keeps the rest, however long its polls wait.
	if got := s.busy.Load(); got != 4 {
		t.Fatalf("busy = %d, want 4", got)
	}
	now = now.Add(time.Minute)
	if eager() != nil {
		t.Fatal("half the slots busy: eager start granted")
	}
	// An empty poll gives its slot back unused: nothing busy changes.
	release(waiting[0])
	if eager() != nil {
		t.Fatal("an unused slot released: eager start granted with half the slots still busy")
	}
	release(first)
	again := eager()
	if again == nil {
		t.Fatal("three of eight busy, a poll waiting: eager start refused")
	}
	// Released without a task (its start failed), it counts nothing.
	release(again)
	if got := s.busy.Load(); got != 3 {
		t.Fatalf("busy = %d after the releases, want 3", got)
	}
	// No poll in flight at all (every poller busy or stopped): refused.
	release(waiting[1])
	if eager() != nil {
		t.Fatal("no poll in flight: eager start granted")
	}
	// Every slot taken: refused by the slots themselves.
	for range 8 - 3 {
		poll()
	}
	now = now.Add(time.Minute)
	s.eagerBusy = 8
	if eager() != nil {
		t.Fatal("no slot left: eager start granted")
	}
}

// Eager grants count from the grant, not from their task's arrival: the
// relay's concurrent starts cannot all see the slots idle and take more
// than half of them.
func TestEagerGrantsInFlightCountAsBusy(t *testing.T) {
	s, err := newEagerSlots(64)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1700000000, 0)
	s.now = func() time.Time { return start }
	if _, err := s.ReserveSlot(context.Background(), reserveInfo{}); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return start.Add(time.Minute) }
	var granted atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if s.TryReserveSlot(reserveInfo{}) != nil {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := granted.Load(); got != 32 {
		t.Fatalf("%d eager grants with no task arrived yet, want half the 64 slots (32)", got)
	}
}

// The worker's slots: workflow tasks through eagerSlots, the others the
// SDK's fixed sizes.
func TestTunerSizes(t *testing.T) {
	tu, err := tuner()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tu.GetWorkflowTaskSlotSupplier().(*eagerSlots); !ok {
		t.Fatalf("workflow task slots: %T, want *eagerSlots", tu.GetWorkflowTaskSlotSupplier())
	}
	for name, got := range map[string]int{
		"workflow task": tu.GetWorkflowTaskSlotSupplier().MaxSlots() - workflowTaskSlots,
		"activity":      tu.GetActivityTaskSlotSupplier().MaxSlots() - activityTaskSlots,
	} {
		if got != 0 {
			t.Errorf("%s slots off by %d", name, got)
		}
	}
	for name, ss := range map[string]sdkworker.SlotSupplier{
		"local activity": tu.GetLocalActivitySlotSupplier(),
		"nexus":          tu.GetNexusSlotSupplier(),
		"session":        tu.GetSessionActivitySlotSupplier(),
	} {
		if ss == nil || ss.MaxSlots() <= 0 {
			t.Errorf("%s slots: %v", name, ss)
		}
	}
}
