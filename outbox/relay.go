package outbox

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// The relays' settings, one set for every outbox. The lease outlasts a batch
// at the usual rate; a call another replica repeats is harmless. A batch is
// one wave of calls per claimer (DefaultParallelism / claimers): what a
// claim puts first (a test event, a quiet workspace's turn) then waits for
// the waves in flight, not for whole batches behind them. Batches of 64
// made issue 18's quiet workspace wait 1.5 s at p50 during another's
// burst on Temporal's own server; batches of 16, 0.76 s. The events outbox
// also has a quiet lane (QuietQueue), which starts test events and quiet
// workspaces' events beside the waves.
const (
	SweepInterval      = 2 * time.Second
	sweepBatch         = DefaultParallelism / claimers
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
	Parallelism int // concurrent Temporal calls of the claimers; 0: DefaultParallelism (the quiet lane adds up to quietBatch)
	Log         *slog.Logger
	OnSent      func(int) // may be nil; hears how many changes each drain sent
	OnFailed    func()    // may be nil; hears of each change whose send failed for itself
	// Limiter, when set, sizes each claim to its claimer's share of a limit
	// that follows how fast Temporal answers (NewStartLimiter), instead of
	// sweepBatch.
	Limiter *StartLimiter
}

// Sweep claims one batch, sends it, marks what was sent, holds back each
// change whose call failed for itself and gives the rest back. A call
// failing for anything else (temporalDown) cancels the rest; its error is
// returned.
func (r Relay[T]) Sweep(ctx context.Context) (claimed, sent int, err error) {
	return r.sweep(ctx, r.wave(1))
}

// wave is one claim's size, and the limiter's epoch it was sized in; a
// quiet wave is the quiet lane's (QuietQueue), which the limiter neither
// sizes nor hears of.
type wave struct {
	size  int
	epoch uint64
	quiet bool
}

// wave is the claim of one of sharing claimers: sweepBatch, or its share
// of the Limiter's limit.
func (r Relay[T]) wave(sharing int) wave {
	if r.Limiter == nil {
		return wave{size: sweepBatch}
	}
	n, epoch := r.Limiter.share(sharing)
	return wave{size: min(sweepBatch, n), epoch: epoch}
}

// sweep is Sweep with a claim of w.size, whose calls' times it reports to
// the Limiter.
func (r Relay[T]) sweep(ctx context.Context, w wave) (claimed, sent int, err error) {
	claim := r.Queue.Claim
	if q, ok := r.Queue.(QuietQueue[T]); ok && w.quiet {
		claim = q.ClaimQuiet
	}
	batch, err := claim(ctx, w.size, claimLease)
	if err != nil || len(batch) == 0 {
		return 0, 0, err
	}
	ok, refused, took, timedOut, sendErr := r.sendAll(ctx, batch)
	if r.Limiter != nil && !w.quiet {
		r.Limiter.report(w.epoch, took, timedOut)
	}
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
	return len(batch), sent, errors.Join(sendErr, markErr, failErr, releaseErr)
}

// sendAll makes the batch's calls: ok[i] when change i was sent, refused[i]
// when its call failed for the change itself. A call failing for anything
// but its own input (temporalDown: Temporal unavailable, refusing this
// client, failing inside) cancels the others, which would fail the same
// way, and its error is returned; a call cut short (its timeout, a
// cancellation) is no fault of its change either. A call Temporal refuses
// as invalid, or the client cannot build, is the change's own and leaves
// its batch-mates be, so no change can hold the others back. took has the
// time of each call answered, and timedOut says whether one ran out of
// time (the clearest sign of an overloaded server); a call that failed at
// once, or made no call (ErrNoCall), says nothing of its load.
func (r Relay[T]) sendAll(ctx context.Context, batch []T) (ok []bool, refused []error, took []time.Duration, timedOut bool, err error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.parallelism())
	ok, refused = make([]bool, len(batch)), make([]error, len(batch))
	times := make([]time.Duration, len(batch))
	var late atomic.Bool
	for i, c := range batch {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			cctx, cancel := context.WithTimeout(gctx, callTimeout)
			defer cancel()
			began := time.Now()
			err := r.Queue.Send(cctx, c)
			switch {
			case err == nil:
				ok[i], times[i] = true, time.Since(began)
			case errors.Is(err, ErrNoCall):
				ok[i] = true
			case cctx.Err() == nil && !temporalDown(err):
				refused[i] = err
			default:
				if errors.Is(cctx.Err(), context.DeadlineExceeded) {
					late.Store(true)
				}
				return err
			}
			return nil
		})
	}
	err = g.Wait()
	for _, d := range times {
		if d > 0 {
			took = append(took, d)
		}
	}
	return ok, refused, took, late.Load(), err
}

// ErrNoCall is what a Queue's Send returns for a change that needed no
// Temporal call (an event with no recipients): it counts as sent, and its
// time is not a Temporal call's.
var ErrNoCall = errors.New("outbox: the change needed no Temporal call")

// claimers sweeps share a backlog, keeping calls in flight across batches.
const claimers = 2

// Drain sweeps until nothing is left or a sweep fails, and reports how many
// changes it sent. Only a full first batch brings in the second claimer,
// and, for a QuietQueue, the quiet lane beside them.
func (r Relay[T]) Drain(ctx context.Context) (int, error) {
	w := r.wave(1)
	claimed, total, err := r.sweep(ctx, w)
	if err != nil || claimed < w.size {
		return total, err
	}
	per := r
	per.Parallelism = max(1, r.parallelism()/claimers)
	var mu sync.Mutex
	count := func(n int) {
		mu.Lock()
		total += n
		mu.Unlock()
	}
	g, ctx := errgroup.WithContext(ctx)
	var backlog sync.WaitGroup
	backlog.Add(claimers)
	for range claimers {
		g.Go(func() error {
			defer backlog.Done()
			for ctx.Err() == nil {
				w := per.wave(claimers)
				claimed, sent, err := per.sweep(ctx, w)
				count(sent)
				if err != nil || claimed < w.size {
					return err
				}
			}
			return nil
		})
	}
	if _, ok := r.Queue.(QuietQueue[T]); ok {
		drained := make(chan struct{})
		go func() {
			backlog.Wait()
			close(drained)
		}()
		g.Go(func() error { return r.quietLane(ctx, drained, count) })
	}
	err = g.Wait()
	return total, err
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
