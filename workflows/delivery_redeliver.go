package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// RedeliverSignal asks an event's delivery workflow for one more attempt to
// one subscription now; a scheduled attempt whose wait it cuts still follows.
const RedeliverSignal = "redeliver"

// Redelivery is RedeliverSignal's payload.
type Redelivery struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	// RequestID says who asked (an API request, a recovery), for the logs.
	RequestID string `json:"requestId,omitempty"`
	// Attempt, when not 0, is the attempt number wanted (those seen recorded,
	// plus one), dropped once made, under way or asked for, so a recovery
	// page signalled again adds nothing. 0: one more attempt.
	Attempt int `json:"attempt,omitempty"`
	// ID, when set, names the request: a second signal with the same ID in
	// one run adds nothing, so a client's retry of a redelivery (same
	// Idempotency-Key) that took over the first request's lapsed claim
	// while that one was still signalling redelivers once.
	ID string `json:"id,omitempty"`
}

// redeliveryIDChange versions the dropping of a repeated Redelivery.ID. It
// is asked for only when a signal carries an ID, which no earlier release
// sent, so a run that never sees one records no marker.
const redeliveryIDChange = "redelivery-id"

// ask passes a redelivery to its recipient's coroutine, held until made is known.
func (d *delivery) ask(ctx workflow.Context, req Redelivery) {
	workflow.GetLogger(ctx).Info("redelivery asked", "subscriptionId", req.SubscriptionID.String(),
		"requestId", req.RequestID, "attempt", req.Attempt, "id", req.ID)
	if req.ID != "" && workflow.GetVersion(ctx, redeliveryIDChange, workflow.DefaultVersion, 1) == 1 {
		if d.asked[req.ID] {
			workflow.GetLogger(ctx).Info("redelivery dropped: this request was signalled already", "id", req.ID)
			return
		}
		d.asked[req.ID] = true
	}
	r := d.byID[req.SubscriptionID]
	if r == nil {
		r = d.add(req.SubscriptionID)
	}
	if r.madeKnown {
		d.take(ctx, r, req.Attempt)
	} else {
		r.held = append(r.held, req.Attempt)
	}
	if !r.running && (r.asked > 0 || len(r.held) > 0) {
		d.spawn(ctx, r, d.serveRedeliveries)
	}
}

// take counts a redelivery unless its attempt is made, under way or asked.
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
