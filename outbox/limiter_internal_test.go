package outbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// mixedQueue's even changes need no call; odd ones are answered after 2 ms,
// except those in late, which hang until their call's time runs out.
type mixedQueue struct{ late map[int]bool }

func (mixedQueue) Name() string                                             { return "mixed" }
func (mixedQueue) Claim(context.Context, int, time.Duration) ([]int, error) { return nil, nil }
func (mixedQueue) Sent(context.Context, []int) error                        { return nil }
func (mixedQueue) Release(context.Context, []int) error                     { return nil }
func (mixedQueue) Failed(context.Context, int) (store.SendFailure, error) {
	return store.SendFailure{}, nil
}

func (q mixedQueue) Send(ctx context.Context, c int) error {
	if c%2 == 0 {
		return ErrNoCall
	}
	wait := 2 * time.Millisecond
	if q.late[c] {
		wait = time.Hour
	}
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A change that needs no call counts as sent and is not timed: its instant
// answer would hide a slow server behind a workspace whose events mostly
// go nowhere.
func TestSendAllTimesOnlyRealCalls(t *testing.T) {
	r := Relay[int]{Queue: mixedQueue{}}
	ok, refused, took, timedOut, err := r.sendAll(context.Background(), []int{0, 1, 2, 3, 4, 5, 6, 8})
	if err != nil || timedOut {
		t.Fatalf("sendAll: timed out %v, error %v", timedOut, err)
	}
	for i := range ok {
		if !ok[i] || refused[i] != nil {
			t.Errorf("change %d: ok %v, refused %v; want sent", i, ok[i], refused[i])
		}
	}
	if len(took) != 3 {
		t.Errorf("%d call times, want 3 (the odd changes)", len(took))
	}
}

// An event with no recipients asks nothing of Temporal.
func TestEventWithoutRecipientsNeedsNoCall(t *testing.T) {
	err := Events{}.Send(context.Background(), models.Event{ID: uuid.New(), Recipients: []uuid.UUID{}})
	if !errors.Is(err, ErrNoCall) {
		t.Fatalf("Send: %v, want ErrNoCall", err)
	}
}

func times(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// A wave claimed before a decrease was sized by the higher limit: its times
// are not the new limit's and decide nothing.
func TestStartLimiterIgnoresWavesOfAnOlderLimit(t *testing.T) {
	l := NewStartLimiter(0)
	_, before := l.share(claimers)
	l.report(before, times(startWindow, time.Second), false)
	if got := l.Limit(); got != DefaultParallelism/2 {
		t.Fatalf("limit %d after a slow window, want %d", got, DefaultParallelism/2)
	}
	_, now := l.share(claimers)
	l.report(now, times(startWindow, time.Millisecond), false)
	if got := l.Limit(); got != DefaultParallelism/2+1 {
		t.Fatalf("limit %d after a fast window, want %d", got, DefaultParallelism/2+1)
	}
	l.report(before, times(startWindow, time.Second), false)
	if got := l.Limit(); got != DefaultParallelism/2+1 {
		t.Fatalf("limit %d after a slow wave of the older limit, want it kept at %d", got, DefaultParallelism/2+1)
	}
}

// A start that runs out of time halves the limit at once: its batch-mates
// were cut short, so no window of times would show it.
func TestStartLimiterHalvesOnATimeout(t *testing.T) {
	r := Relay[int]{Queue: mixedQueue{late: map[int]bool{3: true}}, Limiter: NewStartLimiter(0)}
	// A deadline shorter than callTimeout ends the call the same way.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, _, timedOut, _ := r.sendAll(ctx, []int{1, 3})
	if !timedOut {
		t.Fatal("a call that ran out of its time is not reported")
	}
	_, epoch := r.Limiter.share(1)
	r.Limiter.report(epoch, nil, true)
	if got := r.Limiter.Limit(); got != DefaultParallelism/2 {
		t.Fatalf("limit %d after a timeout, want %d", got, DefaultParallelism/2)
	}
}
