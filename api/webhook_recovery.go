package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Redelivery and recovery (Svix's "resend" and "recover") go through
// Temporal, so every one shows in the Web UI.

// recoveryWorkflowTimeout bounds each Temporal call of these endpoints; a
// healthy server answers in milliseconds, and a query needs a worker.
const recoveryWorkflowTimeout = 5 * time.Second

var (
	errTemporalUnavailable = &models.Error{
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
// workers away (unreachable, timed out, overloaded) is 503 with Retry-After.
func (s *Server) temporalError(r *http.Request, err error) error {
	var (
		unavailable *serviceerror.Unavailable
		deadline    *serviceerror.DeadlineExceeded
		exhausted   *serviceerror.ResourceExhausted
	)
	if errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.As(err, &exhausted) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		s.log.WarnContext(r.Context(), "Temporal unavailable", slog.String("requestId", requestIDFrom(r.Context())), slog.Any("error", err))
		return errTemporalUnavailable
	}
	return err
}

// temporalContext bounds a Temporal call, finishing it even if the client
// hangs up: a signal half-sent is better answered by Temporal than cut. The
// request's deadline (runLeased's) still applies.
func temporalContext(r *http.Request) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(recoveryWorkflowTimeout)
	if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return context.WithDeadline(context.WithoutCancel(r.Context()), deadline)
}

// redeliver is POST .../deliveries/{eventId}/redeliver: one more attempt of
// the event to the subscription now, even after its schedule ended, with the
// same webhook-id. 202 once the event's workflow has the signal; the
// attempt's record follows in the deliveries.
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) {
	ws := principal(r).WorkspaceID
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct{} // no member yet; an empty body or {} is the request
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	sub, err := s.store.Webhooks().Get(r.Context(), ws, subID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, err := s.workspaceEvent(r, ws)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if ok, err := s.isRecipient(r, ev, subID); err != nil {
		s.writeError(w, r, err)
		return
	} else if !ok {
		s.writeError(w, r, errDeliveryNotFound)
		return
	}
	switch {
	case !sub.Enabled:
		s.writeError(w, r, errWebhookDisabled)
		return
	case ev.DispatchedAt == nil:
		s.writeError(w, r, errEventNotDispatched)
		return
	case s.temporal == nil:
		s.writeError(w, r, errTemporalUnavailable)
		return
	}
	ctx, cancel := temporalContext(r)
	defer cancel()
	// Someone waits on it: its task goes before the workspace's backlog. Only
	// a speed-up: the redelivery goes on without it.
	if err := workflows.RaiseToPerson(ctx, s.temporal, s.cfg.TemporalNamespace, ev.ID); err != nil {
		s.log.WarnContext(r.Context(), "redelivery: the running delivery's priority was not raised",
			slog.String("eventId", ev.ID.String()), slog.Any("error", err))
	}
	if err := workflows.SignalRedeliver(ctx, s.temporal, ev, subID, s.cfg.TaskQueue, "api:"+requestIDFrom(r.Context()), 0, workflows.PriorityPerson); err != nil {
		s.writeError(w, r, s.temporalError(r, err))
		return
	}
	writeJSON(w, http.StatusAccepted, models.RedeliveryAccepted{EventID: ev.ID, SubscriptionID: subID})
}

// workspaceEvent reads the path's event; another workspace's is not found.
func (s *Server) workspaceEvent(r *http.Request, ws uuid.UUID) (models.Event, error) {
	id, err := pathID(r, "eventId", "event")
	if err != nil {
		return models.Event{}, err
	}
	ev, err := s.store.Events().Get(r.Context(), id)
	if err == nil && ev.WorkspaceID != ws {
		err = models.NotFound("event")
	}
	return ev, err
}

// isRecipient reports whether the subscription is among the event's
// recipients; for an event stored without them, whether its delivery left a
// state or record for it.
func (s *Server) isRecipient(r *http.Request, ev models.Event, subID uuid.UUID) (bool, error) {
	if ev.Recipients != nil {
		return slices.Contains(ev.Recipients, subID), nil
	}
	return s.store.Deliveries().Delivered(r.Context(), subID, ev.ID)
}

// recoverRequest is POST .../recover's body. The times are strings so that
// a malformed one gets this endpoint's message.
type recoverRequest struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
}

// validate checks the window: since is required, not in the future and
// within DELIVERY_RETENTION (older events are deleted); until defaults to,
// and is capped at, now; since must be before until.
func (req recoverRequest) validate(now time.Time, retention time.Duration) (since, until time.Time, err error) {
	var v models.Validation
	parse := func(field string, raw *string) (time.Time, bool) {
		t, err := parseInstant(*raw)
		if err != nil {
			v.Add(field, "must be an RFC 3339 date-time such as 2026-11-23T10:00:00Z")
			return time.Time{}, false
		}
		return t, true
	}
	until = now
	okUntil := true
	if req.Until != nil {
		var t time.Time
		if t, okUntil = parse("until", req.Until); okUntil && t.Before(now) {
			until = t
		}
	}
	switch {
	case req.Since == nil:
		v.Add("since", "is required: the start of the window (RFC 3339), at most DELIVERY_RETENTION ("+retention.String()+") ago")
	default:
		var ok bool
		if since, ok = parse("since", req.Since); !ok {
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

// recoverWebhook is POST .../webhooks/{webhookId}/recover: redeliver every
// failed delivery of the subscription whose event was created in the
// window, as one workflow (webhook-recover:<webhookId>), so one runs at a
// time per subscription.
func (s *Server) recoverWebhook(w http.ResponseWriter, r *http.Request) {
	ws := principal(r).WorkspaceID
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req recoverRequest
	if err := decode(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	now := s.now().UTC()
	since, until, err := req.validate(now, s.cfg.DeliveryRetention)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, err := s.store.Webhooks().Get(r.Context(), ws, subID)
	switch {
	case err != nil:
		s.writeError(w, r, err)
		return
	case !sub.Enabled:
		s.writeError(w, r, errWebhookDisabled)
		return
	case s.temporal == nil:
		s.writeError(w, r, errTemporalUnavailable)
		return
	}
	in := &workflows.RecoverInput{WorkspaceID: ws, SubscriptionID: subID, Since: since, Until: until, StartedAt: now}
	ctx, cancel := temporalContext(r)
	defer cancel()
	runID, bare, err := workflows.StartRecover(ctx, s.temporal, in, s.cfg.TaskQueue)
	switch {
	case errors.Is(err, workflows.ErrRecoveryRunning):
		msg := "a recovery of this subscription is running"
		if id, err := workflows.RunningRecoveryID(ctx, s.temporal, subID); err == nil {
			msg += " (id " + id + ")"
		}
		s.writeError(w, r, models.Conflict("recovery_running", msg+"; GET .../recover shows its progress; start another once it is done"))
		return
	case err != nil:
		s.writeError(w, r, s.temporalError(r, err))
		return
	case bare:
		s.log.WarnContext(ctx, "recovery workflow started without search attributes: the namespace does not define them",
			slog.String("requestId", requestIDFrom(r.Context())), slog.String("subscriptionId", subID.String()))
	}
	writeJSON(w, http.StatusAccepted, models.WebhookRecovery{
		ID: runID, SubscriptionID: subID, State: models.RecoveryRunning,
		Since: since, Until: until, StartedAt: now,
	})
}

// getRecovery is GET .../webhooks/{webhookId}/recover: the subscription's
// latest recovery, running or finished, as its workflow's query answers.
func (s *Server) getRecovery(w http.ResponseWriter, r *http.Request) {
	ws := principal(r).WorkspaceID
	subID, err := pathID(r, "webhookId", "webhook subscription")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.store.Webhooks().Get(r.Context(), ws, subID); err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.temporal == nil {
		s.writeError(w, r, errTemporalUnavailable)
		return
	}
	ctx, cancel := temporalContext(r)
	defer cancel()
	p, err := workflows.RecoverProgressOf(ctx, s.temporal, subID)
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		s.writeError(w, r, errRecoveryNotFound)
		return
	case err != nil:
		s.writeError(w, r, s.temporalError(r, err))
		return
	}
	writeJSON(w, http.StatusOK, p.WebhookRecovery)
}
