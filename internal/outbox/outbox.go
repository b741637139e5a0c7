// Package outbox starts the delivery workflows of stored events. An event
// row is its own outbox entry: events.dispatched_at stays NULL until the
// workflow has been started. The API starts the workflow right after
// storing the event; when that fails (Temporal unreachable, the API process
// stopped in between), a worker's sweeper starts it later. Starting twice
// is harmless (see workflows.DeliveryStartOptions), so the two need no
// coordination, and sweepers on several worker replicas claim disjoint rows.
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

// Sweeper defaults: how often the worker looks, how old an undispatched
// event must be before the sweeper takes it over from the API (well past
// the API's own start timeout, so the two rarely both start it), how many
// rows one claim takes, and how many starts run at once. Temporal's
// frontend serves starts concurrently, so a backlog drains at the rate
// Temporal starts workflows rather than one round trip at a time.
const (
	SweepInterval      = 2 * time.Second
	SweepMinAge        = 10 * time.Second
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
	_, err := d.Temporal.ExecuteWorkflow(ctx, workflows.DeliveryStartOptions(ev.ID, d.TaskQueue),
		workflows.DeliveryWorkflow, &workflows.DeliveryInput{EventID: ev.ID, Schedule: schedule, Recipients: ev.Recipients})
	return err
}

// Sweep leases one batch of events left undispatched for at least minAge,
// starts their workflows with bounded parallelism, marks the started ones
// dispatched and gives the rest back, and reports how many it claimed and
// started. The first failed start (Temporal is likely down) cancels the
// rest of the batch; they stay in the outbox.
func (d Dispatcher) Sweep(ctx context.Context, minAge time.Duration) (claimed, started int, err error) {
	events := d.Store.Events()
	batch, err := events.ClaimUndispatched(ctx, minAge, sweepBatch, claimLease)
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

// claimers is how many sweeps run side by side, each with half the
// parallelism: while one commits its batch and claims the next, the other
// keeps starts in flight, so a backlog drains at the rate Temporal starts
// workflows instead of pausing at every batch boundary.
const claimers = 2

// Drain sweeps until a sweep finds nothing to claim or fails, and reports
// how many workflows it started.
func (d Dispatcher) Drain(ctx context.Context, minAge time.Duration) (int, error) {
	per := d
	per.Parallelism = max(1, d.parallelism()/claimers)
	var mu sync.Mutex
	total := 0
	g, ctx := errgroup.WithContext(ctx)
	for range claimers {
		g.Go(func() error {
			for ctx.Err() == nil {
				claimed, started, err := per.Sweep(ctx, minAge)
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
	err := g.Wait()
	return total, err
}

func (d Dispatcher) parallelism() int {
	if d.Parallelism > 0 {
		return d.Parallelism
	}
	return DefaultParallelism
}

// Run drains the outbox every interval until ctx ends. onStarted (may be
// nil) hears how many workflows each round started.
func (d Dispatcher) Run(ctx context.Context, interval, minAge time.Duration, onStarted func(int)) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		started, err := d.Drain(ctx, minAge)
		if started > 0 {
			d.Log.Info("outbox: started delivery workflows of undispatched events", slog.Int("count", started))
			if onStarted != nil {
				onStarted(started)
			}
		}
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("outbox: sweep failed; retrying next round", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
