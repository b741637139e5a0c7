package activities

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// DefaultMaxInFlight is how many attempts a subscription may have in flight
// across every replica (WEBHOOK_MAX_IN_FLIGHT's default).
const DefaultMaxInFlight = 10

// sendLeaseMargin covers the record's and the release's round trips; past
// it, a dead worker's lease frees its slot.
const sendLeaseMargin = 10 * time.Second

// sendLease asks the send limits, kept in PostgreSQL for every replica.
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

// throttled is the result of an attempt its send limits hold back, or nil.
func (a *Activities) throttled(ctx context.Context, in *AttemptInput, g *store.SendGrant) *AttemptResult {
	if g == nil || g.OK {
		return nil
	}
	wait := g.Wait
	if g.Reason == store.ThrottledInFlight || g.Reason == ThrottledWorkspaceShare {
		wait = inFlightBackoff(in.Throttled)
		if in.Throttled < crowdedRefusals {
			wait = min(wait, g.Wait)
		}
		wait = wait/2 + rand.N(wait/2+1)
	}
	// Rounded up, so the rate lease reserved for this attempt has started.
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

// inFlightRecheck and inFlightRecheckMax bound the wait of an attempt refused
// a slot: the database knows only when the earliest lease expires, while
// releases come within a request's time. The wait doubles from 1 s to 30 s,
// spread over half to all; after crowdedRefusals (about 40 minutes) up to 2
// minutes, after 500 (about 15 hours) up to 15, so the history (about 11
// events a round) stays under 51,200 events over an attempt's 30 days.
const (
	inFlightRecheck    = time.Second
	inFlightRecheckMax = 30 * time.Second
	crowdedRefusals    = 100
)

// inFlightBackoff is the longest wait after throttled refusals in a row.
func inFlightBackoff(throttled int) time.Duration {
	switch {
	case throttled >= 5*crowdedRefusals:
		return 15 * time.Minute
	case throttled >= crowdedRefusals:
		return 2 * time.Minute
	}
	return min(inFlightRecheck<<min(max(throttled, 0), 5), inFlightRecheckMax)
}

// release gives the lease back when the record's statement did not, even for
// a cancelled attempt: a held slot blocks the subscription until it expires.
func (a *Activities) release(ctx context.Context, in *AttemptInput, lease store.SendLease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.Store.SendLimits().Release(ctx, in.SubscriptionID, lease.Key); err != nil {
		a.log().LogAttrs(ctx, slog.LevelWarn, "webhook send lease not released; it frees itself when it expires",
			slog.String("subscriptionId", in.SubscriptionID.String()),
			slog.Duration("lease", lease.Duration), slog.Any("error", err))
	}
}

// boundRetryAfter bounds a receiver's Retry-After by the schedule's longest
// wait: it pauses every send to the subscription and delays this delivery.
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

// maxRetryAfterHeader caps a parsed Retry-After, so absurd values cannot overflow.
const maxRetryAfterHeader = 24 * time.Hour

// ThrottledWorkspaceShare is the throttling reason of an attempt refused by
// its workspace's share of this worker (WorkspaceShare).
const ThrottledWorkspaceShare = "workspace_share"

// admit takes the attempt's slot in its workspace's share. A local first
// attempt refused fails with ErrLocalAttemptCrowded, so the workflow makes it
// as a regular activity; a regular one refused is throttled like one its
// subscription's in-flight limit refuses.
func (a *Activities) admit(ctx context.Context, in *AttemptInput, ws uuid.UUID) (*ShareTicket, *AttemptResult, error) {
	share, task := a.RegularShare, in.SubscriptionID.String()+"/"+in.EventID.String()
	local := false
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		// Local attempts share their workflow task's slot; a regular one
		// (each run of it: a timed-out run may overlap its retry) holds its own.
		local = info.IsLocalActivity
		task = info.WorkflowExecution.ID + "/" + info.WorkflowExecution.RunID
		if local {
			share = a.LocalShare
		} else {
			task += "/" + info.ActivityID + "/" + strconv.Itoa(int(info.Attempt))
		}
	}
	// A slow subscription's attempts are regular ones, so the regular
	// share is where it is known slow after its first refusal.
	ok := !(local && a.RegularShare.SubscriptionSlow(ws, in.SubscriptionID))
	var ticket *ShareTicket
	if ok {
		ticket, ok = share.Take(ws, in.SubscriptionID, task)
	}
	if ok {
		return ticket, nil, nil
	}
	if local {
		a.Metrics.throttled(ThrottledWorkspaceShare)
		return nil, nil, temporal.NewNonRetryableApplicationError("the subscription is slow, or its workspace holds its share of this worker's workflow-task slots", ErrLocalAttemptCrowded, nil)
	}
	return nil, a.throttled(ctx, in, &store.SendGrant{Reason: ThrottledWorkspaceShare, Wait: MaxAttemptDuration}), nil
}

// subscriptionWorkspaces remembers each subscription's workspace, which
// never changes, up to subscriptionWorkspacesMax, then starts afresh.
type subscriptionWorkspaces struct {
	mu sync.Mutex
	m  map[uuid.UUID]uuid.UUID
}

const subscriptionWorkspacesMax = 100_000

func (w *subscriptionWorkspaces) of(sub uuid.UUID) (uuid.UUID, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws, ok := w.m[sub]
	return ws, ok
}

func (w *subscriptionWorkspaces) remember(sub, ws uuid.UUID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil || len(w.m) >= subscriptionWorkspacesMax {
		w.m = map[uuid.UUID]uuid.UUID{}
	}
	w.m[sub] = ws
}
