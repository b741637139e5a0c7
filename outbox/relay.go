package outbox

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// The relays' settings, one set for every outbox. The lease outlasts a batch
// at the usual rate; a call another replica repeats is harmless. A drain
// keeps DefaultParallelism calls in flight and claims again whenever a
// quarter of them have returned (claimStep), at most sweepBatch changes at
// a time: what a claim puts first (a test event, a quiet workspace's turn)
// waits for the fastest calls in flight, and a batch is small enough that
// what it puts first is not held behind many starts of another workspace
// (docs/operations.md#priorities-and-fairness has the measurements).
const (
	SweepInterval      = 2 * time.Second
	sweepBatch         = 16
	DefaultParallelism = 32
	callTimeout        = 10 * time.Second
	claimLease         = 2 * time.Minute
)

// Deps are what an outbox needs to tell Temporal of its changes.
type Deps struct {
	Temporal  client.Client
	Store     *store.Store
	TaskQueue string
	Log       *slog.Logger
}

// Queue is one outbox: Claim leases pending changes, Send makes one Temporal
// call, Sent marks the changes Temporal took, Failed holds back one whose
// call failed for the change itself and Release gives the rest back.
type Queue[T any] interface {
	Name() string // one of store.Outboxes
	Claim(ctx context.Context, limit int, lease time.Duration) ([]T, error)
	Send(ctx context.Context, change T) error
	Sent(ctx context.Context, changes []T) error
	Failed(ctx context.Context, change T) (store.SendFailure, error)
	Release(ctx context.Context, changes []T) error
}

// Relay drains one outbox.
type Relay[T any] struct {
	Queue       Queue[T]
	Parallelism int // concurrent Temporal calls in a sweep; 0: DefaultParallelism
	Log         *slog.Logger
	OnSent      func(int) // may be nil; hears how many changes each drain sent
	OnFailed    func()    // may be nil; hears of each change whose send failed for itself
}

// process sends a claimed batch (callDone hears of each call's end, or of
// a call never made; stop of a call failing for anything but its change,
// at once), then marks what Temporal took, holds back each change whose
// call failed for itself and gives the rest back.
func (r Relay[T]) process(ctx context.Context, batch []T, callDone func(), stop func(error)) (sent int, err error) {
	ok, refused, sendErr := r.sendAll(ctx, batch, callDone, stop)
	// Mark what Temporal took even during shutdown, so it is not sent again.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	var done, rest []T
	for i, c := range batch {
		switch {
		case ok[i]:
			done = append(done, c)
		case refused[i] == nil:
			rest = append(rest, c)
		}
	}
	sent = len(done)
	markErr := r.Queue.Sent(mctx, done)
	if markErr != nil {
		// Not marked: they stay pending and are sent again (harmless), now
		// rather than after their lease.
		rest, sent = append(rest, done...), 0
	}
	var failErr error
	for i, c := range batch {
		if refused[i] != nil {
			failErr = errors.Join(failErr, r.failed(mctx, c, refused[i]))
		}
	}
	releaseErr := r.Queue.Release(mctx, rest)
	return sent, errors.Join(sendErr, markErr, failErr, releaseErr)
}

// sendAll makes the batch's calls: ok[i] when change i was sent, refused[i]
// when its call failed for the change itself. A call failing for anything
// but its own input (temporalDown: Temporal unavailable, refusing this
// client, failing inside) cancels the others, which would fail the same
// way, and its error is returned; a call cut short (its timeout, a
// cancellation) is no fault of its change either. A call Temporal refuses
// as invalid, or the client cannot build, is the change's own and leaves
// its batch-mates be, so no change can hold the others back. callDone is
// called once per change, as its call ends or is skipped; stop hears of
// the first failure that is not the change's own before its batch ends,
// so a drain claims no more meanwhile. A call cut short because ctx ended
// (the drain stopped, or shutdown) is no error of this batch's.
func (r Relay[T]) sendAll(ctx context.Context, batch []T, callDone func(), stop func(error)) (ok []bool, refused []error, err error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.parallelism())
	ok, refused = make([]bool, len(batch)), make([]error, len(batch))
	launched := 0
	for i, c := range batch {
		if gctx.Err() != nil {
			break
		}
		launched++
		g.Go(func() error {
			defer callDone()
			cctx, cancel := context.WithTimeout(gctx, callTimeout)
			defer cancel()
			err := r.Queue.Send(cctx, c)
			switch {
			case err == nil:
				ok[i] = true
			case cctx.Err() == nil && !temporalDown(err):
				refused[i] = err
			case ctx.Err() != nil:
				// Cut short from outside; its change is given back.
			default:
				stop(err)
				return err
			}
			return nil
		})
	}
	err = g.Wait()
	for range len(batch) - launched {
		callDone()
	}
	return ok, refused, err
}

// claimStep is the fewest free call slots a drain claims for: under a
// backlog it claims as soon as a quarter of its calls have returned, not
// when a whole batch has, and each claim still takes several changes
// (a claim's statement costs about as much for 4 rows as for 16).
func (r Relay[T]) claimStep() int {
	return max(1, min(sweepBatch, r.parallelism()/4))
}

// Drain sends pending changes until none is left or a call fails for
// anything but its change (temporalDown), and reports how many it sent.
// It keeps up to the parallelism's calls in flight across claims: a claim
// is made whenever claimStep slots are free, so what a claim puts first (a
// test event, a quiet workspace's turn) waits for the fastest calls in
// flight, never for the slowest call of a batch ahead of it (a Temporal
// start under load has a long tail). Each claim's batch is marked once its
// own calls have returned.
func (r Relay[T]) Drain(ctx context.Context) (int, error) {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	slots := semaphore.NewWeighted(int64(r.parallelism()))
	step := r.claimStep()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		errs  error
	)
	for {
		if slots.Acquire(ctx, int64(step)) != nil {
			break // stopped: by the caller, or by a batch's failure below
		}
		n := step
		for n < sweepBatch && slots.TryAcquire(1) {
			n++
		}
		batch, err := r.Queue.Claim(ctx, n, claimLease)
		if err != nil {
			slots.Release(int64(n))
			if ctx.Err() == nil { // else cut short by a batch's failure, whose error is kept, or shutdown
				mu.Lock()
				errs = errors.Join(errs, err)
				mu.Unlock()
			}
			break
		}
		slots.Release(int64(n - len(batch)))
		if len(batch) > 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sent, err := r.process(ctx, batch, func() { slots.Release(1) }, stop)
				if err != nil {
					stop(err) // the database failed marking: claim no more now
				}
				mu.Lock()
				total += sent
				errs = errors.Join(errs, err)
				mu.Unlock()
			}()
		}
		if len(batch) < n {
			break // the outbox is drained
		}
	}
	wg.Wait()
	return total, errs
}

func (r Relay[T]) logger() *slog.Logger {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With(slog.String("outbox", r.Queue.Name()))
}

func (r Relay[T]) parallelism() int {
	if r.Parallelism > 0 {
		return r.Parallelism
	}
	return DefaultParallelism
}

// Run drains the outbox on each wake-up and every interval until ctx ends;
// after a failure it waits for the interval, not the next wake-up.
func (r Relay[T]) Run(ctx context.Context, interval time.Duration, wake <-chan struct{}) {
	log := r.logger()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sent, err := r.Drain(ctx)
		if sent > 0 && r.OnSent != nil {
			r.OnSent(sent)
		}
		woken := wake
		if err != nil && ctx.Err() == nil {
			log.Warn("outbox: telling Temporal failed; retrying", slog.Any("error", err))
			woken = nil
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-woken:
			if !ok {
				wake = nil // the listener stopped: sweep on the interval alone
			}
		case <-t.C:
		}
	}
}
