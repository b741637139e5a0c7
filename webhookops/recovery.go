package webhookops

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// RecoverWindow checks a recovery's window, given as RFC 3339 strings so a
// malformed one gets this message: since is required, not in the future
// and within DELIVERY_RETENTION (older events are deleted); until defaults
// to, and is capped at, now; since must be before until.
func RecoverWindow(sinceRaw, untilRaw *string, now time.Time, retention time.Duration) (since, until time.Time, err error) {
	var v models.Validation
	parse := func(field string, raw *string) (time.Time, bool) {
		t, err := models.ParseInstant(*raw)
		if err != nil {
			v.Add(field, "must be an RFC 3339 date-time such as 2026-11-23T10:00:00Z")
			return time.Time{}, false
		}
		return t, true
	}
	until = now
	okUntil := true
	if untilRaw != nil {
		var t time.Time
		if t, okUntil = parse("until", untilRaw); okUntil && t.Before(now) {
			until = t
		}
	}
	switch {
	case sinceRaw == nil:
		v.Add("since", "is required: the start of the window (RFC 3339), at most DELIVERY_RETENTION ("+retention.String()+") ago")
	default:
		var ok bool
		if since, ok = parse("since", sinceRaw); !ok {
			break
		}
		switch {
		case since.After(now):
			v.Add("since", "must not be in the future")
		case since.Before(now.Add(-retention)):
			v.Add("since", "must be within DELIVERY_RETENTION ("+retention.String()+"): older events and their deliveries are deleted")
		case okUntil && !since.Before(until):
			v.Add("until", "must be after since (since is inclusive, until exclusive)")
		}
	}
	return since, until, v.Err()
}

// Recover redelivers every failed delivery of the subscription whose event
// was created in [since, until), as one workflow
// (webhook-recover:<webhookId>), so one runs at a time per subscription.
func (o *Ops) Recover(ctx context.Context, ws, subID uuid.UUID, since, until, now time.Time, requestID string) (models.WebhookRecovery, error) {
	sub, err := o.Store.Webhooks().Get(ctx, ws, subID)
	switch {
	case err != nil:
		return models.WebhookRecovery{}, err
	case !sub.Enabled:
		return models.WebhookRecovery{}, errWebhookDisabled
	case o.Temporal == nil:
		return models.WebhookRecovery{}, ErrTemporalUnavailable
	}
	in := &workflows.RecoverInput{WorkspaceID: ws, SubscriptionID: subID, Since: since, Until: until, StartedAt: now}
	tctx, cancel := temporalContext(ctx)
	defer cancel()
	runID, bare, err := workflows.StartRecover(tctx, o.Temporal, in, o.Config.TaskQueue)
	switch {
	case errors.Is(err, workflows.ErrRecoveryRunning):
		msg := "a recovery of this subscription is running"
		if id, err := workflows.RunningRecoveryID(tctx, o.Temporal, subID); err == nil {
			msg += " (id " + id + ")"
		}
		return models.WebhookRecovery{}, models.Conflict("recovery_running", msg+"; GET .../recover shows its progress; start another once it is done")
	case err != nil:
		return models.WebhookRecovery{}, o.temporalError(ctx, requestID, err)
	case bare:
		o.Log.WarnContext(ctx, "recovery workflow started without search attributes: the namespace does not define them",
			slog.String("requestId", requestID), slog.String("subscriptionId", subID.String()))
	}
	return models.WebhookRecovery{
		ID: runID, SubscriptionID: subID, State: models.RecoveryRunning,
		Since: since, Until: until, StartedAt: now,
	}, nil
}

// Recovery is the subscription's latest recovery, running or finished, as
// its workflow's query answers.
func (o *Ops) Recovery(ctx context.Context, ws, subID uuid.UUID, requestID string) (models.WebhookRecovery, error) {
	if _, err := o.Store.Webhooks().Get(ctx, ws, subID); err != nil {
		return models.WebhookRecovery{}, err
	}
	if o.Temporal == nil {
		return models.WebhookRecovery{}, ErrTemporalUnavailable
	}
	tctx, cancel := temporalContext(ctx)
	defer cancel()
	p, err := workflows.RecoverProgressOf(tctx, o.Temporal, subID)
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		return models.WebhookRecovery{}, errRecoveryNotFound
	case err != nil:
		return models.WebhookRecovery{}, o.temporalError(ctx, requestID, err)
	}
	return p.WebhookRecovery, nil
}
