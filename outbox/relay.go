package outbox

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// The relays' settings, one set for every outbox: how often a relay sweeps
// without being woken, how many rows one claim takes, how many Temporal
// calls run at once, how long one may take, and how long a claim keeps
// other replicas off its rows. Temporal's frontend serves calls
// concurrently, so a backlog drains at the rate Temporal takes them rather
// than one round trip at a time. The lease outlasts a batch at the usual
// rate; should Temporal be slower, another replica may repeat some calls,
// which is harmless.
const (
	SweepInterval      = 2 * time.Second
	sweepBatch         = 500
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

// Queue is one outbox: how to claim its pending changes, tell Temporal of
// one, and record the outcome.
type Queue[T any] interface {
	// Name is the outbox's (store.Outboxes), for logs and metrics.
	Name() string
	Claim(ctx context.Context, limit int, lease time.Duration) ([]T, error)
	// Send makes the Temporal call for one change.
	Send(ctx context.Context, change T) error
	// Sent marks the changes Temporal took; Release gives the others back
	// so the next sweep need not wait for their lease.
	Sent(ctx context.Context, changes []T) error
	Release(ctx context.Context, changes []T) error
}

// Relay drains one outbox.
type Relay[T any] struct {
	Queue Queue[T]
	// Parallelism bounds concurrent Temporal calls in a sweep
	// (DefaultParallelism when zero).
	Parallelism int
	Log         *slog.Logger
	// OnSent (may be nil) hears how many changes each drain delivered.
	OnSent func(int)
}

// Sweep claims one batch, sends its changes with bounded parallelism,
// marks the sent ones and gives the rest back, and reports how many it
// claimed and sent. The first failed call (Temporal is likely down)
// cancels the rest of the batch, which stays pending.
func (r Relay[T]) Sweep(ctx context.Context) (claimed, sent int, err error) {
	batch, err := r.Queue.Claim(ctx, sweepBatch, claimLease)
	if err != nil || len(batch) == 0 {
		return 0, 0, err
	}
	ok, sendErr := r.sendAll(ctx, batch)
	// What Temporal took is marked even if ctx ended meanwhile (shutdown):
	// otherwise it would be sent again, harmlessly but needlessly.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	var done, rest []T
	for i, c := range batch {
		if ok[i] {
			done = append(done, c)
		} else {
			rest = append(rest, c)
		}
	}
	markErr := r.Queue.Sent(mctx, done)
	releaseErr := r.Queue.Release(mctx, rest)
	return len(batch), len(done), errors.Join(sendErr, markErr, releaseErr)
}

// sendAll sends the batch concurrently and reports which calls succeeded.
func (r Relay[T]) sendAll(ctx context.Context, batch []T) ([]bool, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.parallelism())
	ok := make([]bool, len(batch))
	for i, c := range batch {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			cctx, cancel := context.WithTimeout(gctx, callTimeout)
			defer cancel()
			if err := r.Queue.Send(cctx, c); err != nil {
				return err
			}
			ok[i] = true
			return nil
		})
	}
	return ok, g.Wait()
}

// claimers is how many sweeps run side by side on a backlog, each with half
// the parallelism: while one commits its batch and claims the next, the
// other keeps calls in flight, so a backlog drains at the rate Temporal
// takes them instead of pausing at every batch boundary.
const claimers = 2

// Drain sweeps until a sweep finds nothing more to claim or fails, and
// reports how many changes it sent. The first sweep runs alone, so the
// usual wake-up (a few changes) costs one claim; only a full batch, a
// backlog, brings in the second claimer.
func (r Relay[T]) Drain(ctx context.Context) (int, error) {
	claimed, total, err := r.Sweep(ctx)
	if err != nil || claimed < sweepBatch {
		return total, err
	}
	per := r
	per.Parallelism = max(1, r.parallelism()/claimers)
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	for range claimers {
		g.Go(func() error {
			for ctx.Err() == nil {
				claimed, sent, err := per.Sweep(ctx)
				mu.Lock()
				total += sent
				mu.Unlock()
				if err != nil || claimed < sweepBatch {
					return err
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return total, err
}

func (r Relay[T]) parallelism() int {
	if r.Parallelism > 0 {
		return r.Parallelism
	}
	return DefaultParallelism
}

// Run drains the outbox whenever wake fires (see Listen) and at least
// every interval, until ctx ends. It never gives up: after a failed drain
// (Temporal or the database away) it logs and waits for the interval, not
// the next wake-up, so a stream of changes during an outage does not turn
// into a stream of failing claims.
func (r Relay[T]) Run(ctx context.Context, interval time.Duration, wake <-chan struct{}) {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With(slog.String("outbox", r.Queue.Name()))
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
