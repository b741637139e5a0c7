package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// This file holds version 4 (deliveryControl) of the delivery workflow:
// each recipient's schedule as before, plus
//
//   - throttling: an attempt the subscription's limits refuse
//     (activities.AttemptThrottled: its rate limit, its attempts in flight,
//     or a receiver's Retry-After pause) is made again with the same
//     number after the wait the activity names, outside the schedule;
//   - back-pressure: a receiver's Retry-After on a failed attempt
//     lengthens the wait before the next scheduled one, up to the
//     schedule's longest wait;
//   - redeliveries: each RedeliverSignal adds one attempt to one
//     subscription now, numbered after those already made. During a wait
//     it is made at once and the scheduled attempt still follows when the
//     wait ends; after the schedule ended (delivered, exhausted, 410) it
//     is made on its own. A run of a closed event started for a
//     redelivery (DeliveryInput.Redelivery, see SignalRedeliver) reads
//     the number of attempts already recorded first. A redelivery that
//     names its attempt (Redelivery.Attempt: a recovery's) is made only
//     if the recipient has neither made nor been asked for that attempt,
//     so the same one signalled twice is one attempt.
//
// The run completes once no recipient has an attempt due and no signal
// waits, so every signal it accepted is served by it.

// RedeliverSignal asks an event's delivery workflow for one more attempt
// to one subscription, now.
const RedeliverSignal = "redeliver"

// Redelivery is RedeliverSignal's payload.
type Redelivery struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	// RequestID says who asked (an API request, a recovery), for the
	// history and the logs.
	RequestID string `json:"requestId,omitempty"`
	// Attempt, when not 0, is the attempt number asked for: the attempts
	// the asker saw recorded, plus one. The redelivery is dropped when the
	// recipient has made that attempt already, has one under way, or has
	// redeliveries asked that reach it. A recovery sets it, so a page its
	// activity signals again after a crash (its heartbeat lagging behind
	// its signals) adds no attempt to an event it had already redelivered.
	// 0 (the API's): one more attempt, whatever was made.
	//
	// It is the number wanted rather than the number seen so that a
	// delivery with no attempt recorded (skipped while its subscription
	// was disabled) is guarded too.
	Attempt int `json:"attempt,omitempty"`
}

// throttleWaitMin keeps a throttled attempt from spinning when the
// activity names no wait.
const throttleWaitMin = time.Second

// control is the state of a version-4 run: its recipients in the order
// they became known, and how many of them have a coroutine at work.
type control struct {
	byID    map[uuid.UUID]*recipient
	order   []*recipient
	active  int
	maxWait time.Duration // the schedule's longest wait
}

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

func (c *control) add(id uuid.UUID) *recipient {
	r := &recipient{id: id, out: SubscriptionDelivery{SubscriptionID: id, Outcome: OutcomeExhausted}}
	c.byID[id] = r
	c.order = append(c.order, r)
	return r
}

func (d *delivery) runControlled(ctx workflow.Context, recipients []uuid.UUID, setAttributes bool) (*DeliveryResult, error) {
	c := &control{byID: map[uuid.UUID]*recipient{}, maxWait: longestWait(d.in.Schedule)}
	d.control = c
	if recipients == nil && !d.in.Redelivery {
		var err error
		if recipients, err = d.plan(ctx, setAttributes); err != nil {
			return nil, err
		}
	}
	for _, id := range recipients {
		r := c.add(id)
		r.madeKnown = true
		d.spawn(ctx, r, d.deliverScheduled)
	}
	// Signals are taken here, in the main coroutine, rather than by one of
	// their own: the run may end only when no coroutine works and none
	// waits in the channel, and one condition sees both.
	signals := workflow.GetSignalChannel(ctx, RedeliverSignal)
	for {
		err := workflow.Await(ctx, func() bool { return c.active == 0 || signals.Len() > 0 })
		if err != nil {
			break // cancelled: every coroutine sees it too
		}
		took := false
		for {
			// A fresh value each time: decoding leaves the members a
			// payload omits (attempt 0) as they were.
			var req Redelivery
			if !signals.ReceiveAsync(&req) {
				break
			}
			took = true
			d.ask(ctx, req)
		}
		if !took && c.active == 0 {
			break
		}
	}
	res := &DeliveryResult{Subscriptions: make([]SubscriptionDelivery, len(c.order))}
	for i, r := range c.order {
		res.Subscriptions[i] = r.out
	}
	res.Outcome = eventOutcome(res.Subscriptions)
	if setAttributes {
		upsert(ctx, searchattr.Outcome.ValueSet(string(res.Outcome)))
	}
	return res, nil
}

// ask takes one redelivery: the recipient's coroutine serves it (during a
// wait, at once), or a new one does. One whose recipient's attempts made
// are not known yet (a run of a closed event) is held until its
// coroutine has read them.
func (d *delivery) ask(ctx workflow.Context, req Redelivery) {
	c := d.control
	r := c.byID[req.SubscriptionID]
	if r == nil {
		r = c.add(req.SubscriptionID)
	}
	workflow.GetLogger(ctx).Info("redelivery asked", "subscriptionId", req.SubscriptionID.String(),
		"requestId", req.RequestID, "attempt", req.Attempt)
	if r.madeKnown {
		d.take(ctx, r, req.Attempt)
	} else {
		r.held = append(r.held, req.Attempt)
	}
	if !r.running && (r.asked > 0 || len(r.held) > 0) {
		d.spawn(ctx, r, d.serveRedeliveries)
	}
}

// take counts a redelivery of a recipient whose attempts made are known,
// unless it names an attempt (attempt > 0) that the recipient has made,
// is making, or will make for a redelivery already asked: then the
// redelivery asked for has happened, or will, and one more would be a
// duplicate.
func (d *delivery) take(ctx workflow.Context, r *recipient, attempt int) {
	planned := r.made + r.asked
	if r.attempting {
		planned++
	}
	if attempt > 0 && attempt <= planned {
		workflow.GetLogger(ctx).Info("redelivery dropped: its attempt is made or asked for already",
			"subscriptionId", r.id.String(), "attempt", attempt, "made", r.made)
		return
	}
	r.asked++
}

// spawn runs f for r in a coroutine of its own, counted in active.
func (d *delivery) spawn(ctx workflow.Context, r *recipient, f func(workflow.Context, *recipient)) {
	c := d.control
	r.running = true
	c.active++
	workflow.Go(ctx, func(ctx workflow.Context) {
		defer func() {
			r.running = false
			c.active--
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
			next = RetryDelay(sched[k], d.in.EventID, r.id, k+2)
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
	wait := RetryDelay(d.in.Schedule[k-1], d.in.EventID, r.id, k+1)
	if ra := min(r.retryAfter, d.control.maxWait); ra > wait {
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

// serveRedeliveries makes the redeliveries asked of a recipient whose
// schedule is over (or that had none in this run), one after another.
func (d *delivery) serveRedeliveries(ctx workflow.Context, r *recipient) {
	for r.asked > 0 || len(r.held) > 0 {
		if ctx.Err() != nil {
			return
		}
		if !r.madeKnown {
			if err := d.readAttemptsMade(ctx, r); err != nil {
				r.out.Outcome = OutcomeError
				return
			}
			// Signals received during the read, in the order received.
			held := r.held
			r.held = nil
			for _, attempt := range held {
				d.take(ctx, r, attempt)
			}
			continue
		}
		r.asked--
		d.attemptNext(ctx, r, false, true, 0)
		if r.out.Outcome == OutcomeSkipped || r.out.Outcome == OutcomeError {
			r.asked = 0 // disabled, deleted or broken: the rest would fare no better
		}
	}
}

// readAttemptsMade learns how many attempts of the event the recipient's
// earlier runs recorded, so this run's numbers follow them.
func (d *delivery) readAttemptsMade(ctx workflow.Context, r *recipient) error {
	var made activities.AttemptsMadeResult
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, planOptions), deliveryActs.AttemptsMade,
		&activities.AttemptsMadeInput{EventID: d.in.EventID, SubscriptionID: r.id}).Get(ctx, &made)
	if err != nil {
		workflow.GetLogger(ctx).Error("attempts made could not be read", "subscriptionId", r.id.String(), "error", err)
		return err
	}
	r.made, r.madeKnown = made.Attempts, true
	r.out.Attempts = made.Attempts
	return nil
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
		Final: final, NextAttemptIn: next, MaxWait: d.control.maxWait, Manual: manual,
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
		wait := min(max(res.RetryAfter, throttleWaitMin), max(d.control.maxWait, 15*time.Minute))
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
	r.retryAfter = res.RetryAfter
	return false
}

// longestWait is the schedule's longest wait: the bound on how far a
// receiver's Retry-After may push an attempt.
func longestWait(schedule []time.Duration) time.Duration {
	var m time.Duration
	for _, w := range schedule {
		m = max(m, w)
	}
	return m
}
