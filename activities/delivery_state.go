package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// defaultMaxWait bounds a receiver's Retry-After when the workflow passed
// no MaxWait (the design's fallback).
const defaultMaxWait = time.Hour

// exhausts says a failure of this attempt ends its delivery's schedule:
// the last scheduled attempt, not a redelivery's. Such failures are
// counted (webhook_deliveries_exhausted_total) and raise
// webhook.delivery.exhausted.
func exhausts(in *AttemptInput) bool { return in.Final && !in.Manual }

// retryFollows says another attempt is scheduled should this one fail.
// A wait of 0s in the schedule leaves NextAttemptIn zero, and a non-final
// scheduled attempt still has a successor.
func retryFollows(in *AttemptInput) bool {
	return in.NextAttemptIn > 0 || (!in.Final && !in.Manual)
}

// recordOptions is what the attempt's record changes beside itself (see
// store.Deliveries.RecordAttempt): the delivery's state, dated by the
// worker's clock like the record, and whether the failure exhausts it.
// label is what the POST came to, retryAfter the receiver's Retry-After.
func (a *Activities) recordOptions(in *AttemptInput, ev models.Event, label attemptLabel, retryAfter time.Duration) store.RecordOptions {
	now, outcome := a.now(), label.outcome()
	opts := store.RecordOptions{
		// As webhook_deliveries_exhausted_total counts: a 410 ends the
		// delivery because the receiver asked, which exhausts nothing.
		Exhausts:    outcome == AttemptFailed && exhausts(in),
		Now:         now,
		Operational: ev.Type.Operational(),
		Disable:     a.WebhookDisable,
		Status:      models.DeliveryFailed,
	}
	switch {
	case outcome == AttemptDelivered:
		opts.Status = models.DeliverySucceeded
	case outcome == AttemptFailed && retryFollows(in):
		opts.Status = models.DeliveryPending
		if in.NextAttemptIn > 0 {
			next := now.Add(nextWait(in, retryAfter))
			opts.NextAttemptAt = &next
		}
	}
	return opts
}

// nextWait is the wait before the next scheduled attempt, as the workflow
// computes it: the schedule's, or the receiver's Retry-After when later,
// bounded by the schedule's longest wait.
func nextWait(in *AttemptInput, retryAfter time.Duration) time.Duration {
	maxWait := time.Duration(in.MaxWait)
	if maxWait <= 0 {
		maxWait = defaultMaxWait
	}
	return max(time.Duration(in.NextAttemptIn), min(retryAfter, maxWait))
}

// emitted logs the operational events an attempt raised, and wakes the
// outbox relays when one of them has recipients, so its delivery
// starts now rather than at the next sweep.
func (a *Activities) emitted(ctx context.Context, in *AttemptInput, r store.RecordedAttempt) {
	for _, t := range r.Emitted {
		level, msg := slog.LevelInfo, "webhook operational event"
		if t == models.EventWebhookDisabled {
			level, msg = slog.LevelWarn, "webhook subscription disabled: every attempt failed for WEBHOOK_DISABLE_AFTER"
			a.Metrics.subscriptionDisabled()
		}
		a.log().LogAttrs(ctx, level, msg,
			slog.String("type", string(t)),
			slog.String("subscriptionId", in.SubscriptionID.String()),
			slog.String("eventId", in.EventID.String()))
	}
	if r.Dispatch {
		a.Outbox.Poke(store.OutboxEvents)
	}
}
