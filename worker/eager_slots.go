package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
)

// eagerSlots hands out this worker's workflow-task slots, and a slot for an
// eager start (the events relay's, through TryReserveSlot) only while the
// task queue looks empty to this worker: one of its polls has waited
// idlePoll without a task, and at most half the slots hold one.
//
// An eager start hands the workflow's first task to this worker with the
// start's answer, skipping matching: it saves the server a task-queue
// write, a poll and a history write per event (scenario 1 on the stack:
// about 22–26 ms of Temporal CPU per event instead of 33–44), but it also
// skips the queue's order. Granted whenever half the slots were idle, it
// served a flood's new events ahead of the retries, test events and
// redeliveries waiting in the queue (scenario 10 on the stack: the other
// workspace's p99 3.6 s to 6.5 s). A poll that waits finds nothing queued,
// so an eager start then overtakes nothing; while polls come back with
// tasks at once, new events go through the queue like everything else,
// where priority and fairness keys order them
// (docs/operations.md#priorities-and-fairness).
type eagerSlots struct {
	inner     sdkworker.SlotSupplier
	eagerBusy int64
	now       func() time.Time
	busy      atomic.Int64 // slots marked used and not yet released

	mu    sync.Mutex
	polls map[*sdkworker.SlotPermit]time.Time // slots of polls in flight, by when reserved
}

// slotInUse marks a permit whose slot holds a task, so releasing it gives
// back to busy exactly what marking it took.
type slotInUse struct{ used atomic.Bool }

// idlePoll is how long a poll waits for a task before the queue counts as
// empty: far longer than a poll answered from a backlog takes on a healthy
// server, and short enough to be back to eager starts soon after. A
// heuristic: a poll on a read partition no longer written to
// (deploy/temporal/dynamicconfig.yaml) can wait while the written one
// holds a backlog; the server's backlog count would be sounder.
const idlePoll = 100 * time.Millisecond

func newEagerSlots(slots int) (*eagerSlots, error) {
	inner, err := sdkworker.NewFixedSizeSlotSupplier(slots)
	if err != nil {
		return nil, err
	}
	return &eagerSlots{inner: inner, eagerBusy: int64(slots / 2), now: time.Now,
		polls: make(map[*sdkworker.SlotPermit]time.Time)}, nil
}

// ReserveSlot is asked by a poller before each poll.
func (s *eagerSlots) ReserveSlot(ctx context.Context, info sdkworker.SlotReservationInfo) (*sdkworker.SlotPermit, error) {
	p, err := s.inner.ReserveSlot(ctx, info)
	if p != nil {
		p.UserData = new(slotInUse)
		s.mu.Lock()
		s.polls[p] = s.now()
		s.mu.Unlock()
	}
	return p, err
}

// TryReserveSlot is asked for eager starts only (SDK v1.50: workflow tasks
// are otherwise reserved by the pollers through ReserveSlot).
// An eager slot counts as busy from its grant, not from its task's
// arrival: the relay's starts run 32 at once, and each grant must see the
// ones before it.
func (s *eagerSlots) TryReserveSlot(info sdkworker.SlotReservationInfo) *sdkworker.SlotPermit {
	if !s.queueLooksEmpty() || !s.takeBusy() {
		return nil
	}
	p := s.inner.TryReserveSlot(info)
	if p == nil {
		s.busy.Add(-1)
		return nil
	}
	u := new(slotInUse)
	u.used.Store(true)
	p.UserData = u
	return p
}

// takeBusy counts one more busy slot if fewer than eagerBusy are.
func (s *eagerSlots) takeBusy() bool {
	for {
		b := s.busy.Load()
		if b >= s.eagerBusy {
			return false
		}
		if s.busy.CompareAndSwap(b, b+1) {
			return true
		}
	}
}

func (s *eagerSlots) queueLooksEmpty() bool {
	waited := s.now().Add(-idlePoll)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, since := range s.polls {
		if !since.After(waited) {
			return true
		}
	}
	return false
}

func (s *eagerSlots) MarkSlotUsed(info sdkworker.SlotMarkUsedInfo) {
	p := info.Permit()
	s.endPoll(p)
	if u, ok := p.UserData.(*slotInUse); ok && u.used.CompareAndSwap(false, true) {
		s.busy.Add(1)
	}
	s.inner.MarkSlotUsed(info)
}

func (s *eagerSlots) ReleaseSlot(info sdkworker.SlotReleaseInfo) {
	p := info.Permit()
	s.endPoll(p)
	if u, ok := p.UserData.(*slotInUse); ok && u.used.CompareAndSwap(true, false) {
		s.busy.Add(-1)
	}
	s.inner.ReleaseSlot(info)
}

func (s *eagerSlots) endPoll(p *sdkworker.SlotPermit) {
	s.mu.Lock()
	delete(s.polls, p)
	s.mu.Unlock()
}

func (s *eagerSlots) MaxSlots() int { return s.inner.MaxSlots() }

// tuner is the worker's slots: the SDK's fixed sizes, workflow tasks
// through eagerSlots. A worker made again after a fatal error gets a new
// one, since the counts are of the worker that took the permits.
func tuner() (sdkworker.WorkerTuner, error) {
	fixed, err := sdkworker.NewFixedSizeTuner(sdkworker.FixedSizeTunerOptions{
		NumWorkflowSlots: workflowTaskSlots,
		NumActivitySlots: activityTaskSlots,
	})
	if err != nil {
		return nil, err
	}
	wf, err := newEagerSlots(workflowTaskSlots)
	if err != nil {
		return nil, err
	}
	return sdkworker.NewCompositeTuner(sdkworker.CompositeTunerOptions{
		WorkflowSlotSupplier:        wf,
		ActivitySlotSupplier:        fixed.GetActivityTaskSlotSupplier(),
		LocalActivitySlotSupplier:   fixed.GetLocalActivitySlotSupplier(),
		NexusSlotSupplier:           fixed.GetNexusSlotSupplier(),
		SessionActivitySlotSupplier: fixed.GetSessionActivitySlotSupplier(),
	})
}
