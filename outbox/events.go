package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

var errNoTemporal = errors.New("outbox: no Temporal client")

// Events is the outbox of stored events; sending starts a delivery workflow.
// Make it with NewEvents, which gives it the rotations across workspaces
// its claims share (the claimers' and the quiet lane's); a literal Events
// starts every claim at the lowest workspace id.
type Events struct {
	Deps
	Schedule []time.Duration // WEBHOOK_RETRY_SCHEDULE, fixed into each workflow's input
	turns    *store.ClaimTurns
	// quietTurns is the quiet lane's rotation (ClaimQuiet).
	quietTurns *store.ClaimTurns
}

// quietPending is the most events a workspace has undispatched and is still
// quiet: served by the quiet lane beside the backlogs (ClaimQuiet). Five
// events a second, as the benchmark's quiet workspace publishes, leave one
// or two pending at a time.
const quietPending = 8

// NewEvents is the events outbox with its own rotations across workspaces.
func NewEvents(deps Deps, schedule []time.Duration) Events {
	return Events{Deps: deps, Schedule: schedule, turns: new(store.ClaimTurns), quietTurns: new(store.ClaimTurns)}
}

// Name is the outbox's name.
func (Events) Name() string { return store.OutboxEvents }

// Claim leases undispatched events, test events first, then in turns across
// workspaces (in rotation, continuing where the last claim stopped), oldest
// first within each, so one workspace's burst, or many workspaces'
// backlogs, do not hold back the others.
func (e Events) Claim(ctx context.Context, limit int, lease time.Duration) ([]models.Event, error) {
	return e.Store.Events().ClaimUndispatched(ctx, limit, lease, e.turns)
}

// ClaimQuiet leases test events, then the events of quiet workspaces (at
// most quietPending undispatched), in the quiet lane's own rotation: the
// QuietQueue the relay serves beside its claimers.
func (e Events) ClaimQuiet(ctx context.Context, limit int, lease time.Duration) ([]models.Event, error) {
	return e.Store.Events().ClaimQuiet(ctx, limit, quietPending, lease, e.quietTurns)
}

// Send starts the delivery workflow of ev; one with no recipients needs
// none (ErrNoCall). It asks for eager start (the first task with the
// start's answer, skipping the task queue); the worker grants it only while
// the queue looks empty to it, so queued work is seldom overtaken
// (worker.eagerSlots).
func (e Events) Send(ctx context.Context, ev models.Event) error {
	if ev.Recipients != nil && len(ev.Recipients) == 0 {
		return ErrNoCall
	}
	if e.Temporal == nil {
		return errNoTemporal
	}
	schedule := e.Schedule
	if schedule == nil {
		schedule = []time.Duration{}
	}
	ctx, span := startSpan(ctx, ev)
	defer span.End()
	run, bare, err := workflows.StartDelivery(ctx, e.Temporal, ev, e.TaskQueue, schedule)
	if err != nil {
		span.SetStatus(codes.Error, "start failed")
	}
	if bare && e.Log != nil {
		e.Log.Warn("outbox: delivery workflow started without search attributes: the namespace does not define them (see docs/operations.md); it delivers, but the Web UI cannot find it by them",
			slog.String("eventId", ev.ID.String()), slog.String("workflowId", run.GetID()))
	}
	return err
}

// startSpan starts the span of ev's workflow start as a child of the
// request that published it (the context stored with the event), not of
// the relay's batch: a batch serves many events of many requests, and as a
// child each event's path from publish to receiver stays one trace, found
// by one trace id and sampled or not as a whole (docs/operations.md#tracing).
func startSpan(ctx context.Context, ev models.Event) (context.Context, trace.Span) {
	return tracing.Tracer().Start(tracing.Carrier(ev.Trace).Context(ctx), "outbox start delivery",
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("event.id", ev.ID.String()), attribute.String("event.type", string(ev.Type))))
}

// Sent marks the events whose workflows started as dispatched.
func (e Events) Sent(ctx context.Context, evs []models.Event) error {
	return e.Store.Events().MarkManyDispatched(ctx, eventIDs(evs))
}

// Failed holds back an event whose start failed until its retry time.
func (e Events) Failed(ctx context.Context, ev models.Event) (store.SendFailure, error) {
	return e.Store.Events().ReleaseFailed(ctx, ev.ID)
}

// Release gives the others back.
func (e Events) Release(ctx context.Context, evs []models.Event) error {
	return e.Store.Events().ReleaseClaims(ctx, eventIDs(evs))
}

func eventIDs(evs []models.Event) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	return ids
}
