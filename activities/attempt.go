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
	// Final: this attempt's failure exhausts the schedule.
	Final bool `json:"final"`
	// NextAttemptIn, the wait to the next scheduled attempt, dates nextAttemptAt.
	NextAttemptIn Duration `json:"nextAttemptIn,omitempty"`
	// MaxWait is the schedule's longest wait, bounding a receiver's Retry-After.
	MaxWait Duration `json:"maxWait,omitempty"`
	// Manual marks a redelivery's or recovery's attempt: it exhausts nothing.
	Manual bool `json:"manual,omitempty"`
	// Throttled counts refusals in a row by the send limits (inFlightBackoff).
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
	// AttemptThrottled: nothing sent or recorded; made again after RetryAfter.
	AttemptThrottled AttemptOutcome = "throttled"
)

// AttemptResult reports an attempt (StatusCode 0: no response). Host is as
// DisplayHost shows it, never the URL, whose query may carry a token.
type AttemptResult struct {
	Outcome    AttemptOutcome `json:"outcome"`
	StatusCode int            `json:"statusCode"`
	Host       string         `json:"host,omitempty"`
	// RetryAfter is the wait before a throttled retry, or a failure's Retry-After.
	RetryAfter Duration `json:"retryAfter,omitempty"`
}

// ErrUndecryptableSecret is the failure type of a signing secret no key of
// WEBHOOK_SECRET_KEY opens; retryable, so a replica with another key ring
// never drops a delivery.
const ErrUndecryptableSecret = "UndecryptableSecret"

// ErrLocalAttemptCrowded is the failure type of a local first attempt to a
// slow subscription, or whose workspace holds its share of the worker's
// workflow-task slots (Activities.LocalShare): it sends nothing, and the
// workflow makes it as a regular activity. One to a slow subscription has
// taken its send lease first, and leaves it to that regular attempt (a
// slow subscription's attempt refused a slot is throttled instead).
const ErrLocalAttemptCrowded = "LocalAttemptCrowded"

// ErrLocalAttemptLate is the failure type of a local first attempt whose
// deadline could cut its request after the receiver got it: it sends nothing,
// and the workflow makes it as a regular activity.
const ErrLocalAttemptLate = "LocalAttemptLate"

// AttemptDelivery makes one delivery attempt and writes its record. HTTP
// failures are results, not errors: the workflow owns the retry schedule. A
// rerun returns the record already written, and of two racing runs the
// insert's ON CONFLICT keeps the first: one record per attempt number.
func (a *Activities) AttemptDelivery(ctx context.Context, in *AttemptInput) (*AttemptResult, error) {
	if late := localAttemptLate(ctx); late != nil {
		return nil, late
	}
	// The workspace's share is asked before the database when the
	// subscription's workspace is known, so a refusal costs no statement
	// (but a first attempt's, which gives back a lease handed over).
	ws, known := a.workspaces.of(in.SubscriptionID)
	var ticket *ShareTicket
	var sent time.Duration
	// A local attempt to a slow subscription hands over to a regular one,
	// but only once its send limits admit it: refused, it is throttled
	// here, so the workflow waits without an activity that would only be
	// refused (each one a task, its history events and a replay).
	handOver := known && a.localToSlow(ctx, ws, in.SubscriptionID)
	if handOver {
		if a.RegularShare.Full(ws) {
			return a.shareRefused(ctx, in, ws), nil
		}
	} else if known {
		t, refused, err := a.admit(ctx, in, ws)
		if refused != nil && in.AttemptNumber == 1 && firstRun(ctx) {
			// A regular first attempt follows a local one, which may have
			// handed its lease over (the share can fill meanwhile, or
			// another worker's be full): given back, so no slot is held
			// while this one waits. Only by the activity's first run: a
			// retry may be refused because the run it retries still
			// sends under that lease.
			a.release(ctx, in, a.sendLease(in))
		}
		if refused != nil || err != nil {
			return refused, err
		}
		ticket = t
	}
	defer func() { ticket.Done(sent) }()
	// One round trip, one snapshot: this attempt's record, the subscription,
	// the event and, if it would send, its send limits.
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
			if err := deliveries.MarkSkipped(ctx, in.SubscriptionID, in.EventID, a.now()); err != nil {
				return nil, err
			}
		}
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	subQueue := subscriptionQueue(in.SubscriptionID, lease.MaxInFlight)
	if in.Manual || st.Event.Type == models.EventWebhookTest {
		subQueue = slotQueue{}
	} else if g := st.Grant; g != nil && !g.OK {
		subQueue.minHold = a.sending(st.Target.WorkspaceID, in.SubscriptionID)
	}
	if res := a.throttled(ctx, in, st.Grant, subQueue); res != nil {
		return res, nil
	}
	a.room.admitted(subQueue.key, waiterKey(in))
	target, ev := st.Target, st.Event
	if !known {
		a.workspaces.remember(in.SubscriptionID, target.WorkspaceID)
		handOver = a.localToSlow(ctx, target.WorkspaceID, in.SubscriptionID)
		if handOver && a.RegularShare.Full(target.WorkspaceID) {
			a.release(ctx, in, lease)
			return a.shareRefused(ctx, in, target.WorkspaceID), nil
		}
	}
	if handOver {
		// The lease stays: the regular attempt asks with the same key
		// (SendKey) and takes it over, so no other attempt gets the slot
		// meanwhile and no second rate token is spent. Unclaimed, it
		// expires with its Duration.
		return nil, a.crowded()
	}
	// The record's statement gives the lease back; on any other way out, this.
	held := true
	defer func() {
		if held {
			a.release(ctx, in, lease)
		}
	}()
	if !known {
		t, refused, err := a.admit(ctx, in, target.WorkspaceID)
		if refused != nil || err != nil {
			return refused, err
		}
		ticket = t
	}
	keys, err := a.signingKeys(ctx, target, in.EventID)
	if err != nil {
		return nil, err
	}
	custom, err := a.customHeaders(ctx, target, in.EventID)
	if err != nil {
		return nil, err
	}
	body, err := deliveryBody(ev)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("cannot encode the event", "UnencodableEvent", err)
	}

	ticket.Sending()
	start := a.now()
	sctx, span := startAttemptSpan(ctx, in, target.URL)
	out := a.send(sctx, target.URL, ev.ID.String(), keys, body, start, custom)
	endAttemptSpan(span, out)
	elapsed := a.now().Sub(start)
	sent = elapsed
	a.room.held(subQueue.key, elapsed)
	a.room.held(workspaceQueue(target.WorkspaceID, 0).key, elapsed)
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

// localAttemptMargin covers an attempt's two database round trips.
const localAttemptMargin = 5 * time.Second

// firstRun reports whether this is a regular activity's first run.
func firstRun(ctx context.Context) bool {
	return activity.IsActivity(ctx) && !activity.GetInfo(ctx).IsLocalActivity && activity.GetInfo(ctx).Attempt == 1
}

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

// recordOptions is what the record changes beside itself (RecordAttempt).
func (a *Activities) recordOptions(in *AttemptInput, ev models.Event, label attemptLabel, retryAfter time.Duration) store.RecordOptions {
	now, outcome := a.now(), label.outcome()
	opts := store.RecordOptions{
		// A 410 ends the delivery at the receiver's wish: it exhausts nothing.
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

// exhausts: a failure ends the schedule (its last attempt, not a redelivery).
func exhausts(in *AttemptInput) bool { return in.Final && !in.Manual }

// retryFollows: another attempt is scheduled should this one fail, even when
// a 0s wait left NextAttemptIn zero.
func retryFollows(in *AttemptInput) bool {
	return in.NextAttemptIn > 0 || (!in.Final && !in.Manual)
}

// nextWait is the wait before the next scheduled attempt, as the workflow's.
func nextWait(in *AttemptInput, retryAfter time.Duration) time.Duration {
	maxWait := time.Duration(in.MaxWait)
	if maxWait <= 0 {
		maxWait = defaultMaxWait
	}
	return max(time.Duration(in.NextAttemptIn), min(retryAfter, maxWait))
}

// defaultMaxWait bounds a Retry-After when the workflow passed no MaxWait.
const defaultMaxWait = time.Hour

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

// hostOf is a URL's host (and port, never user info) as DisplayHost shows it.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return DisplayHost(u.Host)
}

// emitted logs an attempt's operational events and wakes the outbox relays.
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
