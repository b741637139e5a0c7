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

// slotQueue is where an attempt refused a slot waits (waitingRoom): its
// subscription's in-flight slots, or its workspace's share of this worker.
// The zero value is no queue: an attempt someone waits on (a redelivery, or
// a test event's refused its subscription's slot: the share is asked before
// the event is read) waits its backoff alone, neither behind a crowd nor
// counted in one, as what someone waits on goes first.
type slotQueue struct {
	key   string
	slots int
	// minHold is how long its slots are held at least (waitingRoom.crowd).
	minHold time.Duration
}

// subscriptionQueue is sub's in-flight slots.
func subscriptionQueue(sub uuid.UUID, slots int) slotQueue {
	return slotQueue{key: "s/" + sub.String(), slots: slots}
}

// sending is how long the longest request to sub of ws in flight on this
// worker has been under way: the least its slots are held for.
func (a *Activities) sending(ws, sub uuid.UUID) time.Duration {
	return max(a.LocalShare.Sending(ws, sub), a.RegularShare.Sending(ws, sub))
}

func workspaceQueue(ws uuid.UUID, slots int) slotQueue {
	return slotQueue{key: "w/" + ws.String(), slots: slots}
}

// waiterKey names an attempt in the waiting room.
func waiterKey(in *AttemptInput) string {
	return in.SubscriptionID.String() + "/" + store.SendKey(in.EventID, in.AttemptNumber).String()
}

// throttled is the result of an attempt its send limits hold back, or nil.
// Refused a slot, it waits its backoff or, behind a crowd, about as long as
// the crowd takes (waitingRoom), spread over half to all of it.
func (a *Activities) throttled(ctx context.Context, in *AttemptInput, g *store.SendGrant, q slotQueue) *AttemptResult {
	if g == nil || g.OK {
		return nil
	}
	wait := g.Wait
	if g.Reason == store.ThrottledInFlight || g.Reason == ThrottledWorkspaceShare {
		wait = inFlightBackoff(in.Throttled)
		if in.Throttled < crowdedRefusals {
			wait = min(wait, g.Wait)
		}
		task := waiterKey(in)
		if q.key != "" {
			wait = max(wait, a.room.crowd(q.key, task, q.slots, q.minHold))
		}
		wait = wait/2 + rand.N(wait/2+1)
		if q.key != "" {
			a.room.waiting(q.key, task, wait)
		}
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
// spread over half to all; after crowdedRefusals (some 25 to 50 minutes of
// the backoff alone; a crowd's waits are longer) up to 2 minutes, after 500
// up to 15, so the history (about 11 events a round) stays under 51,200
// events over an attempt's 30 days.
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
	ticket, ok := share.Take(ws, in.SubscriptionID, task)
	if ok {
		a.room.admitted(workspaceQueue(ws, 0).key, waiterKey(in))
		return ticket, nil, nil
	}
	if local {
		return nil, nil, a.crowded()
	}
	return nil, a.shareRefused(ctx, in, ws), nil
}

// shareRefused is the result of a regular attempt its workspace's share
// of this worker refuses (or would).
func (a *Activities) shareRefused(ctx context.Context, in *AttemptInput, ws uuid.UUID) *AttemptResult {
	var q slotQueue
	if !in.Manual {
		q = workspaceQueue(ws, a.RegularShare.slots(ws))
	}
	return a.throttled(ctx, in, &store.SendGrant{Reason: ThrottledWorkspaceShare, Wait: MaxAttemptDuration}, q)
}

// localToSlow reports whether this is a local attempt to a subscription
// known slow: by its local attempts until the first regular ones have
// taken long, by the regular ones after (its attempts are all regular
// then).
func (a *Activities) localToSlow(ctx context.Context, ws, sub uuid.UUID) bool {
	return activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity &&
		(a.RegularShare.SubscriptionSlow(ws, sub) || a.LocalShare.SubscriptionSlow(ws, sub))
}

// crowded is a local first attempt's failure when it gives way to a
// regular one, counted as a workspace_share refusal.
func (a *Activities) crowded() error {
	a.Metrics.throttled(ThrottledWorkspaceShare)
	return temporal.NewNonRetryableApplicationError("the subscription is slow, or its workspace holds its share of this worker's workflow-task slots", ErrLocalAttemptCrowded, nil)
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
