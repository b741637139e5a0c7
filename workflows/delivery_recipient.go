package workflows

import (
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// recipient is one subscription's delivery within the run.
type recipient struct {
	id uuid.UUID
	// made is the number of attempts recorded; known once the run made
	// them or read them (a recipient that only a redelivery named).
	made      int
	madeKnown bool
	host      string
	// asked counts redeliveries received and not yet made.
	asked int
	// held are the redeliveries (their Attempt) received before made is
	// known: whether each is wanted is decided once it is read.
	held []int
	// attempting: an attempt (number made+1) is under way.
	attempting bool
	running    bool
	// retryAfter is the receiver's Retry-After of the last failed attempt.
	retryAfter time.Duration
	out        SubscriptionDelivery
}

// throttleWaitMin keeps a throttled attempt from spinning when the
// activity names no wait.
const throttleWaitMin = time.Second

func (d *delivery) add(id uuid.UUID) *recipient {
	r := &recipient{id: id, out: SubscriptionDelivery{SubscriptionID: id, Outcome: OutcomeExhausted}}
	d.byID[id] = r
	d.order = append(d.order, r)
	return r
}

// spawn runs f for r in a coroutine of its own, counted in active.
func (d *delivery) spawn(ctx workflow.Context, r *recipient, f func(workflow.Context, *recipient)) {
	r.running = true
	d.active++
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() {
			r.running = false
			d.active--
		}()
		f(ctx, r)
	})
}

// deliverScheduled makes attempt 1 at once, then one attempt after each
// wait of the schedule, until one succeeds, the receiver answers 410, or
// the subscription is disabled or deleted; redeliveries asked during a
// wait are made at once, and the wait goes on. Redeliveries asked after
// the schedule are served before the coroutine ends.
func (d *delivery) deliverScheduled(ctx workflow.Context, r *recipient) {
	sched := d.in.Schedule
	for k := 0; k <= len(sched); k++ {
		if k > 0 {
			if stop := d.waitForScheduled(ctx, r, k); stop {
				d.serveRedeliveries(ctx, r)
				return
			}
		}
		final := k == len(sched)
		var next time.Duration
		if !final {
			next = RetryDelay(time.Duration(sched[k]), d.in.EventID, r.id, k+2)
		}
		if stop := d.attemptNext(ctx, r, final, false, next); stop {
			d.serveRedeliveries(ctx, r)
			return
		}
	}
	d.serveRedeliveries(ctx, r)
}

// waitForScheduled waits before scheduled attempt k+1 (the schedule's
// k-th wait, lengthened to the receiver's last Retry-After up to the
// longest wait), making each redelivery asked meanwhile at once. It
// reports whether the recipient is done (delivered, gone, skipped, or
// the workflow cancelled).
func (d *delivery) waitForScheduled(ctx workflow.Context, r *recipient, k int) (stop bool) {
	wait := RetryDelay(time.Duration(d.in.Schedule[k-1]), d.in.EventID, r.id, k+1)
	if ra := min(r.retryAfter, d.maxWait); ra > wait {
		wait = ra
	}
	r.retryAfter = 0
	fireAt := workflow.Now(ctx).Add(wait)
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	timer := workflow.NewTimerWithOptions(tctx, wait,
		workflow.TimerOptions{Summary: "wait for " + attemptSummary(r.made+1, r.host, r.id)})
	for {
		if err := workflow.Await(ctx, func() bool { return timer.IsReady() || r.asked > 0 }); err != nil {
			r.out.Outcome = OutcomeError // cancelled
			return true
		}
		if timer.IsReady() {
			if err := timer.Get(ctx, nil); err != nil {
				r.out.Outcome = OutcomeError // cancelled
				return true
			}
			return false
		}
		r.asked--
		if stop := d.attemptNext(ctx, r, false, true, max(fireAt.Sub(workflow.Now(ctx)), time.Millisecond)); stop {
			return true
		}
	}
}

// attemptNext makes the recipient's next attempt: scheduled (final when it
// is the schedule's last) or manual (a redelivery), next being the wait
// before the scheduled attempt that follows a failure (zero: none). A
// throttled attempt is made again with the same number after the wait the
// activity names. It reports whether the recipient is done: delivered,
// gone, skipped, or an attempt that could not be made.
func (d *delivery) attemptNext(ctx workflow.Context, r *recipient, final, manual bool, next time.Duration) (stop bool) {
	n := r.made + 1
	in := &activities.AttemptInput{
		EventID: d.in.EventID, SubscriptionID: r.id, AttemptNumber: n,
		Final: final, NextAttemptIn: activities.Duration(next), MaxWait: activities.Duration(d.maxWait), Manual: manual,
	}
	var res activities.AttemptResult
	// Under way until it is counted in made (or could not be made), so a
	// redelivery naming attempt n meanwhile is not made twice.
	r.attempting = true
	defer func() { r.attempting = false }()
	for {
		summary := attemptSummary(n, r.host, r.id)
		if manual {
			summary = "redelivery: " + summary
		}
		var err error
		res, err = d.attempt(ctx, summary, in)
		if res.Host != "" {
			r.host = res.Host
		}
		if err != nil {
			workflow.GetLogger(ctx).Error("delivery attempt could not be made",
				"subscriptionId", r.id.String(), "attempt", n, "error", err)
			r.out.Outcome = OutcomeError
			return true
		}
		if res.Outcome != activities.AttemptThrottled {
			break
		}
		in.Throttled++
		// Bounded against an absurd wait, but never below what a crowd's
		// backoff asks for (activities.inFlightBackoff: up to 15 minutes).
		wait := min(max(time.Duration(res.RetryAfter), throttleWaitMin), max(d.maxWait, 15*time.Minute))
		timer := workflow.NewTimerWithOptions(ctx, wait, workflow.TimerOptions{Summary: "throttled: wait for " + summary})
		if err := timer.Get(ctx, nil); err != nil {
			r.out.Outcome = OutcomeError // cancelled
			return true
		}
	}
	switch res.Outcome {
	case activities.AttemptSkipped:
		r.out.Outcome = OutcomeSkipped
		return true
	case activities.AttemptDelivered:
		r.made, r.out.Attempts, r.out.Outcome = n, n, OutcomeDelivered
		return true
	case activities.AttemptGone:
		r.made, r.out.Attempts, r.out.Outcome = n, n, OutcomeGone
		return true
	}
	r.made, r.out.Attempts, r.out.Outcome = n, n, OutcomeExhausted
	r.retryAfter = time.Duration(res.RetryAfter)
	return false
}

// longestWait is the schedule's longest wait: the bound on how far a
// receiver's Retry-After may push an attempt.
func longestWait(schedule []activities.Duration) time.Duration {
	var m time.Duration
	for _, w := range schedule {
		m = max(m, time.Duration(w))
	}
	return m
}

// retryJitter is the spread of a wait around its scheduled value (±10%),
// so retries of many events that failed together do not arrive together.
const retryJitter = 0.10

// RetryDelay is the wait before attempt n: base ±10%, drawn from a hash of
// the event, subscription and attempt. Deterministic, so replays agree
// without a side effect, yet different for every delivery.
func RetryDelay(base time.Duration, eventID, subID uuid.UUID, attempt int) time.Duration {
	h := fnv.New64a()
	h.Write(eventID[:])
	h.Write(subID[:])
	h.Write([]byte{byte(attempt), byte(attempt >> 8)})
	frac := float64(h.Sum64()%2001)/1000 - 1 // in [-1, 1]
	return base + time.Duration(frac*retryJitter*float64(base))
}
