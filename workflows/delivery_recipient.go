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
	// made counts the attempts recorded, once madeKnown (made or read).
	made      int
	madeKnown bool
	host      string
	// asked counts redeliveries received and not yet made.
	asked int
	// held are redeliveries (their Attempt) awaiting madeKnown.
	held []int
	// attempting: attempt made+1 is under way.
	attempting bool
	running    bool
	retryAfter time.Duration
	out        SubscriptionDelivery
}

// throttleWaitMin keeps a throttled attempt that names no wait from spinning.
const throttleWaitMin = time.Second

func (d *delivery) add(id uuid.UUID) *recipient {
	r := &recipient{id: id, out: SubscriptionDelivery{SubscriptionID: id, Outcome: OutcomeExhausted}}
	d.byID[id] = r
	d.order = append(d.order, r)
	return r
}

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

// deliverScheduled makes the schedule's attempts, then the redeliveries asked.
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

// waitForScheduled waits before attempt k+1, making redeliveries meanwhile.
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

// attemptNext makes the next attempt, next being the wait before the following
// scheduled one; a throttled attempt is repeated with its number.
func (d *delivery) attemptNext(ctx workflow.Context, r *recipient, final, manual bool, next time.Duration) (stop bool) {
	n := r.made + 1
	in := &activities.AttemptInput{
		EventID: d.in.EventID, SubscriptionID: r.id, AttemptNumber: n,
		Final: final, NextAttemptIn: activities.Duration(next), MaxWait: activities.Duration(d.maxWait), Manual: manual,
	}
	var res activities.AttemptResult
	// Under way until counted in made, so a redelivery naming n is not made twice.
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
		// Capped, yet never below activities.inFlightBackoff (up to 15 minutes).
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

func longestWait(schedule []activities.Duration) time.Duration {
	var m time.Duration
	for _, w := range schedule {
		m = max(m, time.Duration(w))
	}
	return m
}

// retryJitter keeps retries of events that failed together apart.
const retryJitter = 0.10

// RetryDelay is the wait before attempt n: base ±10% from a hash of event,
// subscription and attempt, so replays agree without a side effect.
func RetryDelay(base time.Duration, eventID, subID uuid.UUID, attempt int) time.Duration {
	h := fnv.New64a()
	h.Write(eventID[:])
	h.Write(subID[:])
	h.Write([]byte{byte(attempt), byte(attempt >> 8)})
	frac := float64(h.Sum64()%2001)/1000 - 1 // in [-1, 1]
	return base + time.Duration(frac*retryJitter*float64(base))
}
