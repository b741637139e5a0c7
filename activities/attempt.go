package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// AttemptInput is one attempt to deliver an event to one subscription.
type AttemptInput struct {
	EventID        uuid.UUID `json:"eventId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	AttemptNumber  int       `json:"attemptNumber"`
	// Final says no scheduled attempt follows this one if it fails: its
	// failure exhausts the schedule (the metrics count it, and the
	// subscription's other webhooks hear of it: webhook.delivery.exhausted).
	Final bool `json:"final"`
	// NextAttemptIn is the wait before the next scheduled attempt should
	// this one fail (zero when Final or Manual): it dates the delivery
	// state's nextAttemptAt.
	NextAttemptIn Duration `json:"nextAttemptIn,omitempty"`
	// MaxWait is the schedule's longest wait: the bound on how far a
	// receiver's Retry-After may push this subscription's next attempt.
	MaxWait Duration `json:"maxWait,omitempty"`
	// Manual marks an attempt asked for by a redelivery or recovery, beyond
	// or ahead of the schedule: its failure exhausts nothing, and a
	// scheduled attempt may still follow (NextAttemptIn).
	Manual bool `json:"manual,omitempty"`
	// Throttled counts how many times in a row this attempt was held back
	// by its subscription's limits: while its attempts in flight are what
	// holds it, each refusal doubles the wait before it asks again (see
	// inFlightBackoff).
	Throttled int `json:"throttled,omitempty"`
}

// AttemptOutcome is what an attempt came to, as the workflow sees it.
type AttemptOutcome string

// Attempt outcomes. Only Failed is worth another attempt.
const (
	AttemptDelivered AttemptOutcome = "delivered" // 2xx
	AttemptFailed    AttemptOutcome = "failed"    // any other status, or no response
	AttemptGone      AttemptOutcome = "gone"      // 410: the receiver wants no more
	AttemptSkipped   AttemptOutcome = "skipped"   // subscription disabled or deleted, event deleted: nothing sent, nothing recorded
	// AttemptThrottled: nothing was sent or recorded because the
	// subscription is at its rate limit, its concurrency limit, or paused by
	// a receiver's Retry-After; the workflow makes the same attempt number
	// again after RetryAfter.
	AttemptThrottled AttemptOutcome = "throttled"
)

// AttemptResult reports an attempt. StatusCode is 0 when no response came.
// Host is the receiver's host (and port, if the URL names one), as
// DisplayHost shows it, which the workflow shows in the summary of the subscription's next attempt; never
// the URL, whose path or query may carry a token. It is empty when the
// attempt was skipped.
type AttemptResult struct {
	Outcome    AttemptOutcome `json:"outcome"`
	StatusCode int            `json:"statusCode"`
	Host       string         `json:"host,omitempty"`
	// RetryAfter: for AttemptThrottled, how long to wait before making the
	// attempt again; for AttemptFailed, the receiver's Retry-After (a 429 or
	// 503 that sent one), which the workflow's next wait honours up to the
	// schedule's longest wait. Zero otherwise.
	RetryAfter Duration `json:"retryAfter,omitempty"`
}

// ErrUndecryptableSecret is the failure type of a signing secret that no
// key of the worker's WEBHOOK_SECRET_KEY ring opens. It is retryable: a
// replica configured with another ring (mid-rotation, or misconfigured)
// must not drop the delivery, and the retry may land on a replica that
// holds the key, or on this one once its configuration is fixed.
const ErrUndecryptableSecret = "UndecryptableSecret"

// ErrLocalAttemptLate is the failure type of a local first attempt that
// waited so long for a slot of the worker's that less than a whole
// request's time is left before its deadline: it gives up before sending,
// and the workflow makes the attempt as the regular activity, whose
// deadline starts when it starts. Sending anyway could see the request cut
// after the receiver got it, and sent again.
const ErrLocalAttemptLate = "LocalAttemptLate"

// AttemptDelivery makes one delivery attempt and writes its record.
//
// HTTP failures are results, not errors: the workflow owns the retry
// schedule, and Temporal never retries an attempt because the receiver
// failed. Errors are left for infrastructure trouble (database down, worker
// gone mid-attempt), which Temporal retries; a retry first looks for the
// record of this attempt number and, when the earlier run wrote it, returns
// what it recorded without sending again. So every attempt number has
// exactly one record and the numbers have no gaps.
//
// The workflow makes attempt 1 as a local activity and, when that returns
// an error, makes it again as a regular activity with the same number; a
// worker lost during the local attempt has its workflow task retried, which
// runs the local attempt again. Each re-run is one of the cases above: the
// record is there (returned as is), or it is not (the attempt is made
// again, a duplicate receipt with the same webhook-id), or two runs race
// and the insert's ON CONFLICT keeps the first record, which both return.
func (a *Activities) AttemptDelivery(ctx context.Context, in *AttemptInput) (*AttemptResult, error) {
	if late := localAttemptLate(ctx); late != nil {
		return nil, late
	}
	// One round trip reads the record of this attempt number (if an earlier
	// run wrote it), the subscription and the event, from one snapshot, and
	// when the attempt would send, acquires its send limits (attempt_limits.go).
	deliveries := a.Store.Deliveries()
	lease := a.sendLease(in)
	st, err := deliveries.AttemptStateAcquire(ctx, in.SubscriptionID, in.EventID, in.AttemptNumber, lease)
	if errors.Is(err, models.ErrNotFound) {
		// Deleted as the limits were acquired: nothing to send to.
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Existing != nil {
		return resultOf(*st.Existing, st.Target.URL), nil
	}
	if !st.TargetFound || !st.Target.Enabled || !st.EventFound {
		if st.TargetFound && st.EventFound {
			// Disabled: the delivery ends here, and its state says so.
			if err := deliveries.MarkSkipped(ctx, in.SubscriptionID, in.EventID, a.now()); err != nil {
				return nil, err
			}
		}
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if res := a.throttled(ctx, in, st.Grant); res != nil {
		return res, nil
	}
	// The record's statement gives the lease back (RecordOptions.Lease);
	// on every other way out, this does.
	held := true
	defer func() {
		if held {
			a.release(ctx, in, lease)
		}
	}()
	target, ev := st.Target, st.Event
	keys, err := a.signingKeys(ctx, target, in.EventID)
	if err != nil {
		return nil, err
	}
	body, err := deliveryBody(ev)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("cannot encode the event", "UnencodableEvent", err)
	}

	start := a.now()
	out := a.send(ctx, target.URL, ev.ID.String(), keys, body, start)
	elapsed := a.now().Sub(start)
	out.retryAfter = boundRetryAfter(in, out.retryAfter)

	opts := a.recordOptions(in, ev, out.label, out.retryAfter)
	opts.Lease, opts.Pause = &lease.Key, out.retryAfter
	recorded, err := deliveries.RecordAttempt(ctx, out.record(in, start, elapsed), opts)
	held = held && err != nil
	stored, wrote := recorded.Delivery, recorded.Wrote
	if errors.Is(err, models.ErrNotFound) {
		// Deleted while the request was in flight: nothing left to record on.
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if err != nil {
		return nil, err
	}
	if !wrote {
		// A concurrent run of this attempt recorded first; its record stands.
		return resultOf(stored, target.URL), nil
	}

	res := resultOf(stored, target.URL)
	if res.Outcome == AttemptFailed {
		res.RetryAfter = Duration(out.retryAfter)
	}
	a.observe(ctx, in, ev, out, elapsed, res)
	a.emitted(ctx, in, recorded)
	return res, nil
}

// observe counts and logs an attempt its run recorded.
func (a *Activities) observe(ctx context.Context, in *AttemptInput, ev models.Event, out sent, elapsed time.Duration, res *AttemptResult) {
	a.Metrics.attempt(string(out.label), elapsed)
	switch {
	case res.Outcome == AttemptDelivered:
		a.Metrics.delivered(a.now().Sub(ev.DateCreated))
	case res.Outcome == AttemptFailed && exhausts(in):
		a.Metrics.deliveryExhausted()
	case res.Outcome == AttemptFailed && retryFollows(in):
		a.Metrics.retryScheduled()
	}
	a.log().LogAttrs(ctx, slog.LevelInfo, "webhook attempt",
		slog.String("eventId", in.EventID.String()),
		slog.String("subscriptionId", in.SubscriptionID.String()),
		slog.Int("attempt", in.AttemptNumber),
		slog.String("outcome", string(out.label)),
		slog.Int("status", out.status),
		slog.Duration("duration", elapsed))
}

// localAttemptMargin is what an attempt needs beyond its request: its two
// database round trips.
const localAttemptMargin = 5 * time.Second

// localAttemptLate returns ErrLocalAttemptLate's error when ctx is a local
// activity's with less than a request and its margin left.
func localAttemptLate(ctx context.Context) error {
	if !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	if !info.IsLocalActivity || info.Deadline.IsZero() {
		return nil
	}
	if left := time.Until(info.Deadline); left < MaxAttemptDuration+localAttemptMargin {
		return temporal.NewApplicationError(
			fmt.Sprintf("local attempt started with %v before its deadline, less than a request needs", left.Round(time.Millisecond)),
			ErrLocalAttemptLate)
	}
	return nil
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

// defaultMaxWait bounds a receiver's Retry-After when the workflow passed
// no MaxWait (the design's fallback).
const defaultMaxWait = time.Hour

// resultOf reads an attempt's outcome from its record, and names the host
// of the subscription's URL.
func resultOf(rec models.WebhookDelivery, targetURL string) *AttemptResult {
	res := &AttemptResult{Outcome: AttemptFailed, Host: hostOf(targetURL)}
	if rec.StatusCode != nil {
		res.StatusCode = *rec.StatusCode
	}
	switch {
	case rec.Success:
		res.Outcome = AttemptDelivered
	case res.StatusCode == http.StatusGone:
		res.Outcome = AttemptGone
	}
	return res
}

// hostOf is a URL's host (with its port, never its user info) as
// DisplayHost shows it, since the result lands in the history and the Web
// UI; empty when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return DisplayHost(u.Host)
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

func (a *Activities) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.New(slog.DiscardHandler)
}
