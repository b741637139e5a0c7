package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// Eager start skips the task queue, so the relay asks for it only while it
// keeps up: a full claim (a backlog) starts every workflow through the
// queue, where priority and fairness keys order it.
func TestEventsEagerOnlyWhileKeepingUp(t *testing.T) {
	f := newBacklogFixture(t)
	q := outbox.NewEvents(outbox.Deps{Store: f.st}, nil)
	claim := func() []outbox.EventStart {
		t.Helper()
		evs, err := q.Claim(context.Background(), outbox.SweepBatch, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	f.wait(1)
	if evs := claim(); len(evs) != 1 || !evs[0].Eager {
		t.Fatalf("one waiting event: claimed %d, eager %v; want it started eagerly", len(evs), len(evs) == 1 && evs[0].Eager)
	}
	f.wait(outbox.SweepBatch)
	evs := claim()
	if len(evs) != outbox.SweepBatch {
		t.Fatalf("claimed %d of a backlog, want a full batch of %d", len(evs), outbox.SweepBatch)
	}
	for _, ev := range evs {
		if ev.Eager {
			t.Fatal("a full claim (a backlog) asked for eager start, which would put it ahead of the queue")
		}
	}
}
