package outbox_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/outbox"
)

// fakeQueue is an outbox of numbered changes: Send fails for those in
// failing with their error, Sent fails when sentErr is set, and every call
// is recorded.
type fakeQueue struct {
	mu       sync.Mutex
	pending  []int
	failing  map[int]error
	sentErr  error
	marked   []int
	failed   []int
	released []int
}

func (q *fakeQueue) Name() string { return "fake" }

func (q *fakeQueue) Claim(context.Context, int, time.Duration) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.pending
	q.pending = nil
	return batch, nil
}

func (q *fakeQueue) Send(ctx context.Context, c int) error {
	if err := ctx.Err(); err != nil {
		return err // as a Temporal call on a cancelled context does
	}
	return q.failing[c]
}

func (q *fakeQueue) Sent(_ context.Context, cs []int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.sentErr != nil {
		return q.sentErr
	}
	q.marked = append(q.marked, cs...)
	return nil
}

func (q *fakeQueue) Failed(_ context.Context, c int) (store.SendFailure, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.failed = append(q.failed, c)
	return store.SendFailure{Failures: 1}, nil
}

func (q *fakeQueue) Release(_ context.Context, cs []int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.released = append(q.released, cs...)
	return nil
}

// A sweep marks exactly the changes Temporal took, holds back a change
// Temporal refused and gives every other one back; when marking fails, it
// gives the rest of the batch back (to be sent again now rather than after
// the lease) and counts nothing as sent.
func TestRelaySweepMarksWhatWasSentAndReleasesTheRest(t *testing.T) {
	q := &fakeQueue{pending: []int{1, 2, 3}, failing: map[int]error{2: serviceerror.NewUnavailable("connection refused")}}
	r := outbox.Relay[int]{Queue: q, Parallelism: 1}
	claimed, sent, err := r.Sweep(context.Background())
	if err == nil || claimed != 3 {
		t.Fatalf("sweep: claimed %d, error %v; want 3 and the send's error", claimed, err)
	}
	slices.Sort(q.marked)
	slices.Sort(q.released)
	// With one call at a time Temporal being unavailable at 2 cancels 3.
	if sent != 1 || !slices.Equal(q.marked, []int{1}) || !slices.Equal(q.released, []int{2, 3}) || len(q.failed) != 0 {
		t.Fatalf("sent %d, marked %v, released %v, failed %v; want 1 sent and marked, 2 and 3 released",
			sent, q.marked, q.released, q.failed)
	}

	q = &fakeQueue{pending: []int{1, 2, 3}, failing: map[int]error{2: errors.New("temporal refused")}}
	r = outbox.Relay[int]{Queue: q, Parallelism: 1}
	if _, sent, err := r.Sweep(context.Background()); err != nil || sent != 2 {
		t.Fatalf("sweep with a change refused: %d sent, error %v; want 2 and none", sent, err)
	}
	slices.Sort(q.marked)
	if !slices.Equal(q.marked, []int{1, 3}) || !slices.Equal(q.failed, []int{2}) || len(q.released) != 0 {
		t.Fatalf("marked %v, failed %v, released %v; want 1 and 3 marked, 2 held back", q.marked, q.failed, q.released)
	}

	q = &fakeQueue{pending: []int{1, 2}, sentErr: errors.New("database away")}
	r = outbox.Relay[int]{Queue: q}
	if _, sent, err := r.Sweep(context.Background()); err == nil || sent != 0 {
		t.Fatalf("sweep with marking failing: %d sent, error %v; want 0 and the error", sent, err)
	}
	slices.Sort(q.released)
	if !slices.Equal(q.released, []int{1, 2}) {
		t.Fatalf("released %v, want the whole batch", q.released)
	}
}
