// Package outbox starts the delivery workflows of stored events. An event
// row is its own outbox entry: events.dispatched_at stays NULL until the
// workflow has been started. Publishing only stores the row, so Temporal is
// never on the publish path; the API notifies the workers (Notifier), whose
// dispatchers (Run) claim what is waiting and start the workflows at once,
// and sweep every SweepInterval for anything a notification missed.
// Dispatchers on several worker replicas claim disjoint rows, and starting
// twice is harmless anyway (see workflows.DeliveryStartOptions).
package outbox

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Dispatcher defaults: how often it sweeps without being woken, how many
// rows one claim takes, and how many starts run at once. Temporal's
// frontend serves starts concurrently, so a backlog drains at the rate
// Temporal starts workflows rather than one round trip at a time.
const (
	SweepInterval      = 2 * time.Second
	sweepBatch         = 500
	DefaultParallelism = 32
	startTimeout       = 10 * time.Second
	// claimLease outlasts a batch at the usual start rate; if Temporal is
	// so slow that a batch takes longer, another sweeper may start some
	// of its events again, which the workflow ID policy makes harmless.
	claimLease = 2 * time.Minute
)

var errNoTemporal = errors.New("outbox: no Temporal client")

// Dispatcher starts delivery workflows and marks their events dispatched.
type Dispatcher struct {
	Temporal  client.Client
	Store     *store.Store
	TaskQueue string
	// Schedule is WEBHOOK_RETRY_SCHEDULE, fixed into each workflow's input.
	Schedule []time.Duration
	// Parallelism bounds concurrent starts in a sweep (DefaultParallelism
	// when zero).
	Parallelism int
	Log         *slog.Logger
}

// Start starts the delivery workflow of a stored event and marks the event
// dispatched. An event without recipients needs no workflow: it is only
// marked. On error the event stays in the outbox for the sweeper.
func (d Dispatcher) Start(ctx context.Context, ev models.Event) error {
	if err := d.start(ctx, ev); err != nil {
		return err
	}
	return d.Store.Events().MarkDispatched(ctx, ev.ID, time.Now().UTC())
}

// start starts the workflow of ev, if it needs one.
func (d Dispatcher) start(ctx context.Context, ev models.Event) error {
	if ev.Recipients != nil && len(ev.Recipients) == 0 {
		return nil
	}
	if d.Temporal == nil {
		return errNoTemporal
	}
	schedule := d.Schedule
	if schedule == nil {
		schedule = []time.Duration{}
	}
	run, bare, err := workflows.StartDelivery(ctx, d.Temporal, ev, d.TaskQueue, schedule)
	if bare && d.Log != nil {
		d.Log.Warn("outbox: delivery workflow started without search attributes: the namespace does not define them (see docs/operations.md); it delivers, but the Web UI cannot find it by them",
			slog.String("eventId", ev.ID.String()), slog.String("workflowId", run.GetID()))
	}
	return err
}

// Sweep leases one batch of undispatched events, starts their workflows with bounded parallelism, marks the started ones
// dispatched and gives the rest back, and reports how many it claimed and
// started. The first failed start (Temporal is likely down) cancels the
// rest of the batch; they stay in the outbox.
func (d Dispatcher) Sweep(ctx context.Context) (claimed, started int, err error) {
	events := d.Store.Events()
	batch, err := events.ClaimUndispatched(ctx, sweepBatch, claimLease)
	if err != nil || len(batch) == 0 {
		return 0, 0, err
	}
	ids, startErr := d.startAll(ctx, batch)
	// Started workflows are marked even if ctx ended meanwhile (shutdown):
	// otherwise they would be started again, harmlessly but needlessly.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	markErr := events.MarkManyDispatched(mctx, ids)
	var rest []uuid.UUID
	for _, ev := range batch {
		if !slices.Contains(ids, ev.ID) {
			rest = append(rest, ev.ID)
		}
	}
	releaseErr := events.ReleaseClaims(mctx, rest)
	return len(batch), len(ids), errors.Join(startErr, markErr, releaseErr)
}

// startAll starts events concurrently and returns the ids it started.
func (d Dispatcher) startAll(ctx context.Context, events []models.Event) ([]uuid.UUID, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.parallelism())
	var mu sync.Mutex
	ids := make([]uuid.UUID, 0, len(events))
	for _, ev := range events {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			sctx, cancel := context.WithTimeout(gctx, startTimeout)
			defer cancel()
			if err := d.start(sctx, ev); err != nil {
				return err
			}
			mu.Lock()
			ids = append(ids, ev.ID)
			mu.Unlock()
			return nil
		})
	}
	return ids, g.Wait()
}

// claimers is how many sweeps run side by side on a backlog, each with half
// the parallelism: while one commits its batch and claims the next, the
// other keeps starts in flight, so a backlog drains at the rate Temporal
// starts workflows instead of pausing at every batch boundary.
const claimers = 2

// Drain sweeps until a sweep finds nothing more to claim or fails, and
// reports how many workflows it started. The first sweep runs alone, so
// the usual wake-up (a few events) costs one claim; only a full batch,
// a backlog, brings in the second claimer.
func (d Dispatcher) Drain(ctx context.Context) (int, error) {
	claimed, total, err := d.Sweep(ctx)
	if err != nil || claimed < sweepBatch {
		return total, err
	}
	per := d
	per.Parallelism = max(1, d.parallelism()/claimers)
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	for range claimers {
		g.Go(func() error {
			for ctx.Err() == nil {
				claimed, started, err := per.Sweep(ctx)
				mu.Lock()
				total += started
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

func (d Dispatcher) parallelism() int {
	if d.Parallelism > 0 {
		return d.Parallelism
	}
	return DefaultParallelism
}

// Run drains the outbox whenever wake fires (see Listen) and at least
// every interval, until ctx ends. After a failed drain (Temporal or the
// database away) it waits for the interval, not for the next wake-up, so
// a steady stream of publishes during an outage does not turn into a
// stream of failing claims. onStarted (may be nil) hears how many
// workflows each drain started.
func (d Dispatcher) Run(ctx context.Context, interval time.Duration, wake <-chan struct{}, onStarted func(int)) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		started, err := d.Drain(ctx)
		if started > 0 && onStarted != nil {
			onStarted(started)
		}
		woken := wake
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("outbox: starting delivery workflows failed; retrying", slog.Any("error", err))
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
