package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// Redeliveries: each RedeliverSignal adds one attempt to one subscription
// now, numbered after those already made. During a wait it is made at once
// and the scheduled attempt still follows when the wait ends; after the
// schedule ended (delivered, exhausted, 410) it is made on its own. A run
// of a closed event started for a redelivery (DeliveryInput.Redelivery,
// see SignalRedeliver) reads the number of attempts already recorded
// first. A redelivery that names its attempt (Redelivery.Attempt: a
// recovery's) is made only if the recipient has neither made nor been
// asked for that attempt, so the same one signalled twice is one attempt.

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

// ask takes one redelivery: the recipient's coroutine serves it (during a
// wait, at once), or a new one does. One whose recipient's attempts made
// are not known yet (a run of a closed event) is held until its
// coroutine has read them.
func (d *delivery) ask(ctx workflow.Context, req Redelivery) {
	r := d.byID[req.SubscriptionID]
	if r == nil {
		r = d.add(req.SubscriptionID)
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
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, readOptions), deliveryActs.AttemptsMade,
		&activities.AttemptsMadeInput{EventID: d.in.EventID, SubscriptionID: r.id}).Get(ctx, &made)
	if err != nil {
		workflow.GetLogger(ctx).Error("attempts made could not be read", "subscriptionId", r.id.String(), "error", err)
		return err
	}
	r.made, r.madeKnown = made.Attempts, true
	r.out.Attempts = made.Attempts
	return nil
}
