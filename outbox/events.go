package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

var errNoTemporal = errors.New("outbox: no Temporal client")

// Events is the outbox of stored events; sending starts a delivery workflow.
// Make it with NewEvents, which gives it the rotation across workspaces its
// claims share; a literal Events starts every claim at the lowest
// workspace id.
type Events struct {
	Deps
	Schedule []time.Duration // WEBHOOK_RETRY_SCHEDULE, fixed into each workflow's input
	turns    *store.ClaimTurns
}

// NewEvents is the events outbox with its own rotation across workspaces.
func NewEvents(deps Deps, schedule []time.Duration) Events {
	return Events{Deps: deps, Schedule: schedule, turns: new(store.ClaimTurns)}
}

// Name is the outbox's name.
func (Events) Name() string { return store.OutboxEvents }

// EventStart is a claimed event and how to start its delivery.
type EventStart struct {
	models.Event
	// Eager hands the workflow's first task to this worker with the start
	// when it has a free slot, skipping the task queue: only while the
	// outbox keeps up, since it would put the event ahead of every task
	// the queue holds, past its priority and fairness keys.
	Eager bool
}

// keepingUp is the largest claim still taken as the outbox keeping up: one
// short of a batch, a claim that emptied the outbox (15 events; it was 16
// when batches were 64 and this a quarter of one). A full claim may have a
// backlog behind it and goes through the queue.
const keepingUp = sweepBatch - 1

// Claim leases undispatched events, test events first, then in turns across
// workspaces (in rotation, continuing where the last claim stopped), oldest
// first within each, so one workspace's burst, or many workspaces'
// backlogs, do not hold back the others.
func (e Events) Claim(ctx context.Context, limit int, lease time.Duration) ([]EventStart, error) {
	evs, err := e.Store.Events().ClaimUndispatched(ctx, limit, lease, e.turns)
	out := make([]EventStart, len(evs))
	for i, ev := range evs {
		out[i] = EventStart{Event: ev, Eager: len(evs) <= keepingUp}
	}
	return out, err
}

// Send starts the delivery workflow of ev unless it has no recipients.
func (e Events) Send(ctx context.Context, ev EventStart) error {
	if ev.Recipients != nil && len(ev.Recipients) == 0 {
		return nil
	}
	if e.Temporal == nil {
		return errNoTemporal
	}
	schedule := e.Schedule
	if schedule == nil {
		schedule = []time.Duration{}
	}
	run, bare, err := workflows.StartDelivery(ctx, e.Temporal, ev.Event, e.TaskQueue, schedule, ev.Eager)
	if bare && e.Log != nil {
		e.Log.Warn("outbox: delivery workflow started without search attributes: the namespace does not define them (see docs/operations.md); it delivers, but the Web UI cannot find it by them",
			slog.String("eventId", ev.ID.String()), slog.String("workflowId", run.GetID()))
	}
	return err
}

// Sent marks the events whose workflows started as dispatched.
func (e Events) Sent(ctx context.Context, evs []EventStart) error {
	return e.Store.Events().MarkManyDispatched(ctx, eventIDs(evs))
}

// Release gives the others back.
func (e Events) Release(ctx context.Context, evs []EventStart) error {
	return e.Store.Events().ReleaseClaims(ctx, eventIDs(evs))
}

func eventIDs(evs []EventStart) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	return ids
}
