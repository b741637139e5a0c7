package webhookops

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Redelivery and recovery (Svix's "resend" and "recover") go through
// Temporal, so every one shows in the Web UI.

// temporalTimeout bounds each Temporal call; a healthy server answers in
// milliseconds, and a query needs a worker.
const temporalTimeout = 5 * time.Second

var (
	// ErrTemporalUnavailable is 503: nothing was done.
	ErrTemporalUnavailable = &models.Error{
		Kind: models.ErrUnavailable, Code: "temporal_unavailable",
		Message: "the service cannot reach Temporal or its workers right now; nothing was done; retry after the Retry-After delay",
	}
	errWebhookDisabled = models.Conflict("webhook_disabled",
		"the subscription is disabled: enable it first (PUT .../webhooks/{webhookId} {\"enabled\": true}), then try again")
	errEventNotDispatched = models.Conflict("event_not_dispatched",
		"the event's delivery has not started yet: its first attempts are still to come")
	errDeliveryNotFound = &models.Error{
		Kind: models.ErrNotFound, Code: "delivery_not_found",
		Message: "delivery not found: the subscription is not among the event's recipients",
	}
	errRecoveryNotFound = &models.Error{
		Kind: models.ErrNotFound, Code: "recovery_not_found",
		Message: "recovery not found: this subscription has no recovery (or its last one is past Temporal's retention)",
	}
)

// temporalError translates an error of a Temporal call: Temporal or its
// workers away (unreachable, timed out, overloaded) is 503.
func (o *Ops) temporalError(ctx context.Context, requestID string, err error) error {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
	)
	if errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		o.Log.WarnContext(ctx, "Temporal unavailable", slog.String("requestId", requestID), slog.Any("error", err))
		return ErrTemporalUnavailable
	}
	return err
}

// temporalContext bounds a Temporal call, finishing it even if the client
// hangs up: a signal half-sent is better answered by Temporal than cut.
// The caller's deadline still applies.
func temporalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(temporalTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(ctx), deadline)
}

// Redeliver makes one more attempt of the event to the subscription now,
// even after its schedule ended, with the same webhook-id; done once the
// event's workflow has the signal. Another workspace's event is not found.
// requestID names the request in the signal and the logs; once, when set,
// identifies the request across its retries (workflows.Redelivery.ID), so a
// repeat the event's run has seen adds nothing; uuid.Nil as eventID reads
// as an event not found.
func (o *Ops) Redeliver(ctx context.Context, ws, subID, eventID uuid.UUID, requestID, once string) (models.RedeliveryAccepted, error) {
	sub, err := o.Store.Webhooks().Get(ctx, ws, subID)
	if err != nil {
		return models.RedeliveryAccepted{}, err
	}
	var ev models.Event
	if eventID == uuid.Nil { // a malformed id in the caller's path
		err = models.NotFound("event")
	} else {
		ev, err = o.Store.Events().Get(ctx, eventID)
	}
	if err == nil && ev.WorkspaceID != ws {
		err = models.NotFound("event")
	}
	if err != nil {
		return models.RedeliveryAccepted{}, err
	}
	if ok, err := o.isRecipient(ctx, ev, subID); err != nil {
		return models.RedeliveryAccepted{}, err
	} else if !ok {
		return models.RedeliveryAccepted{}, errDeliveryNotFound
	}
	switch {
	case !sub.Enabled:
		return models.RedeliveryAccepted{}, errWebhookDisabled
	case ev.DispatchedAt == nil:
		return models.RedeliveryAccepted{}, errEventNotDispatched
	case o.Temporal == nil:
		return models.RedeliveryAccepted{}, ErrTemporalUnavailable
	}
	tctx, cancel := temporalContext(ctx)
	defer cancel()
	// Someone waits on it: its task goes before the workspace's backlog.
	// Only a speed-up: the redelivery goes on without it.
	if err := workflows.RaiseToPerson(tctx, o.Temporal, o.Config.TemporalNamespace, ev.ID); err != nil {
		o.Log.WarnContext(ctx, "redelivery: the running delivery's priority was not raised",
			slog.String("eventId", ev.ID.String()), slog.Any("error", err))
	}
	if err := workflows.SignalRedeliver(tctx, o.Temporal, ev, o.Config.TaskQueue,
		workflows.Redelivery{SubscriptionID: subID, RequestID: requestID, ID: once}, workflows.PriorityPerson); err != nil {
		return models.RedeliveryAccepted{}, o.temporalError(ctx, requestID, err)
	}
	return models.RedeliveryAccepted{EventID: ev.ID, SubscriptionID: subID}, nil
}

// isRecipient reports whether the subscription is among the event's
// recipients; for an event stored without them, whether its delivery left a
// state or record for it.
func (o *Ops) isRecipient(ctx context.Context, ev models.Event, subID uuid.UUID) (bool, error) {
	if ev.Recipients != nil {
		return slices.Contains(ev.Recipients, subID), nil
	}
	return o.Store.Deliveries().Delivered(ctx, subID, ev.ID)
}
