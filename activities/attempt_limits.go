package activities

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// This file holds an attempt's send limits: its subscription's attempts in
// flight (leases, WEBHOOK_MAX_IN_FLIGHT), its rate limit and a receiver's
// Retry-After pause, all kept in PostgreSQL so every replica honours them.

// DefaultMaxInFlight is how many attempts one subscription may have in
// flight across every worker replica when Activities.MaxInFlight is unset
// (WEBHOOK_MAX_IN_FLIGHT's default).
const DefaultMaxInFlight = 10

// sendLeaseMargin is how much longer than a request an attempt's lease
// lasts: the record's and the release's round trips. Past it, a lease
// whose worker died frees its slot.
const sendLeaseMargin = 10 * time.Second

// sendLease is what the attempt asks the send limits for.
func (a *Activities) sendLease(in *AttemptInput) store.SendLease {
	n := a.MaxInFlight
	if n <= 0 {
		n = DefaultMaxInFlight
	}
	return store.SendLease{
		Key:         store.SendKey(in.EventID, in.AttemptNumber),
		MaxInFlight: n,
		Duration:    MaxAttemptDuration + sendLeaseMargin,
	}
}

// throttled is the result of an attempt its send limits hold back (nil
// when it may send): nothing was sent or recorded, and the workflow makes
// the same attempt again after RetryAfter.
func (a *Activities) throttled(ctx context.Context, in *AttemptInput, g *store.SendGrant) *AttemptResult {
	if g == nil || g.OK {
		return nil
	}
	wait := g.Wait
	if g.Reason == store.ThrottledInFlight {
		wait = inFlightBackoff(in.Throttled)
		if in.Throttled < crowdedRefusals {
			wait = min(wait, g.Wait)
		}
		wait = wait/2 + rand.N(wait/2+1)
	}
	// Whole milliseconds, rounded up: the lease reserved for this attempt
	// (rate) must have started when it comes back.
	wait = max(wait.Round(time.Millisecond)+time.Millisecond, 10*time.Millisecond)
	a.Metrics.throttled(g.Reason)
	a.log().LogAttrs(ctx, slog.LevelDebug, "webhook attempt throttled",
		slog.String("eventId", in.EventID.String()),
		slog.String("subscriptionId", in.SubscriptionID.String()),
		slog.Int("attempt", in.AttemptNumber),
		slog.String("reason", g.Reason),
		slog.Duration("wait", wait))
	return &AttemptResult{Outcome: AttemptThrottled, RetryAfter: Duration(wait)}
}

// inFlightRecheck and inFlightRecheckMax bound the wait of an attempt
// refused because its subscription has every slot taken: the database can
// only say when the earliest lease expires, while releases usually come
// within a request's time. The first refusal waits up to a second; each
// one after it (AttemptInput.Throttled) twice as long, up to 30 s, so a
// backlog waiting on a slow receiver asks (and writes history) a few times
// a minute per event instead of every second. The wait is spread (half to
// all of it) so the refused do not all come back at once.
//
// An attempt refused crowdedRefusals times in a row (about 40 minutes) is
// one of a crowd far larger than the subscription's slots, which the
// earliest lease's end no longer bounds: it waits up to 2 minutes, and
// after 500 refusals (about 15 hours) up to 15, so its workflow's history
// (about 11 events a round: some 5,500 for the first 500 rounds, then
// about 4,000 rounds of 11 minutes on average) stays inside Temporal's
// 51,200 events over the 30 days an attempt may wait.
const (
	inFlightRecheck    = time.Second
	inFlightRecheckMax = 30 * time.Second
	crowdedRefusals    = 100
)

// inFlightBackoff is the longest wait of an attempt refused for its
// subscription's slots after throttled refusals in a row.
func inFlightBackoff(throttled int) time.Duration {
	switch {
	case throttled >= 5*crowdedRefusals:
		return 15 * time.Minute
	case throttled >= crowdedRefusals:
		return 2 * time.Minute
	}
	return min(inFlightRecheck<<min(max(throttled, 0), 5), inFlightRecheckMax)
}

// release gives the attempt's lease back when its record's statement did
// not (an error before or during it). It outlives a cancelled attempt's
// context: a slot left held would block the subscription's other attempts
// until its lease runs out.
func (a *Activities) release(ctx context.Context, in *AttemptInput, lease store.SendLease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.Store.SendLimits().Release(ctx, in.SubscriptionID, lease.Key); err != nil {
		a.log().LogAttrs(ctx, slog.LevelWarn, "webhook send lease not released; it frees itself when it expires",
			slog.String("subscriptionId", in.SubscriptionID.String()),
			slog.Duration("lease", lease.Duration), slog.Any("error", err))
	}
}

// boundRetryAfter bounds a receiver's Retry-After by the schedule's
// longest wait (MaxWait, or defaultMaxWait when the workflow gave none):
// how long the record's statement pauses every send to the subscription
// (RecordOptions.Pause), and how long this delivery's next attempt waits
// at least.
func boundRetryAfter(in *AttemptInput, retryAfter time.Duration) time.Duration {
	if retryAfter <= 0 {
		return 0
	}
	bound := time.Duration(in.MaxWait)
	if bound <= 0 {
		bound = defaultMaxWait
	}
	return min(retryAfter, bound)
}

// maxRetryAfterHeader bounds what a Retry-After header is read as before
// the attempt's own bound (MaxWait), so absurd values cannot overflow.
const maxRetryAfterHeader = 24 * time.Hour
