// Package outbox starts the delivery workflows of stored events. An event
// row is its own outbox entry: events.dispatched_at stays NULL until the
// workflow has been started. The API starts the workflow right after
// storing the event; when that fails (Temporal unreachable, the API process
// stopped in between), the worker's sweeper starts it later. Starting twice
// is harmless (see workflows.DeliveryStartOptions), so the two need no
// coordination.
package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Sweeper defaults: how often the worker looks, and how old an undispatched
// event must be before the sweeper takes it over from the API (well past
// the API's own start timeout, so the two rarely both start it).
const (
	SweepInterval = 2 * time.Second
	SweepMinAge   = 10 * time.Second
	sweepBatch    = 200
)

var errNoTemporal = errors.New("outbox: no Temporal client")

// Dispatcher starts delivery workflows and marks their events dispatched.
type Dispatcher struct {
	Temporal  client.Client
	Store     *store.Store
	TaskQueue string
	// Schedule is WEBHOOK_RETRY_SCHEDULE, fixed into each workflow's input.
	Schedule []time.Duration
	Log      *slog.Logger
}

// Start starts the delivery workflow of a stored event and marks the event
// dispatched. On error the event stays in the outbox for the sweeper.
func (d Dispatcher) Start(ctx context.Context, eventID uuid.UUID) error {
	if d.Temporal == nil {
		return errNoTemporal
	}
	schedule := d.Schedule
	if schedule == nil {
		schedule = []time.Duration{}
	}
	_, err := d.Temporal.ExecuteWorkflow(ctx, workflows.DeliveryStartOptions(eventID, d.TaskQueue),
		workflows.DeliveryWorkflow, &workflows.DeliveryInput{EventID: eventID, Schedule: schedule})
	if err != nil {
		return err
	}
	return d.Store.Events().MarkDispatched(ctx, eventID, time.Now().UTC())
}

// Sweep starts the workflows of events left undispatched for at least
// minAge and reports how many it started.
func (d Dispatcher) Sweep(ctx context.Context, minAge time.Duration) (int, error) {
	events, err := d.Store.Events().Undispatched(ctx, time.Now().Add(-minAge), sweepBatch)
	if err != nil {
		return 0, err
	}
	started := 0
	for _, ev := range events {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := d.Start(sctx, ev.ID)
		cancel()
		if err != nil {
			// Temporal is likely down: stop here and try again next round.
			return started, err
		}
		started++
	}
	return started, nil
}

// Run sweeps every interval until ctx ends. onStarted (may be nil) hears
// how many workflows each round started.
func (d Dispatcher) Run(ctx context.Context, interval, minAge time.Duration, onStarted func(int)) {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := d.Sweep(ctx, minAge)
		if n > 0 {
			d.Log.Info("outbox: started delivery workflows of undispatched events", slog.Int("count", n))
			if onStarted != nil {
				onStarted(n)
			}
		}
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("outbox: sweep failed; retrying next round", slog.Any("error", err))
		}
	}
}
