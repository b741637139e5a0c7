package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// DeliveryInput names the event. Schedule (the waits before attempts 2, 3,
// ...) and Recipients are fixed in the history, so a configuration change
// never alters a running delivery or its replay. A Redelivery run has neither.
type DeliveryInput struct {
	EventID    uuid.UUID             `json:"eventId"`
	Schedule   []activities.Duration `json:"schedule"`
	Recipients []uuid.UUID           `json:"recipients"`
	Redelivery bool                  `json:"redelivery,omitempty"`
}

// Outcome is what became of an event's delivery to one subscription.
type Outcome string

// Outcomes of a delivery, best first (eventOutcome ranks them).
const (
	OutcomeDelivered Outcome = "delivered" // a 2xx arrived
	OutcomeSkipped   Outcome = "skipped"   // disabled or deleted before an attempt
	OutcomeGone      Outcome = "gone"      // 410: no further attempts
	OutcomeExhausted Outcome = "exhausted" // every attempt of the schedule failed
	OutcomeError     Outcome = "error"     // an attempt could not be made, or the workflow was cancelled (see its log)
)

var outcomeRank = map[Outcome]int{
	OutcomeDelivered: 0, OutcomeSkipped: 1, OutcomeGone: 2, OutcomeExhausted: 3, OutcomeError: 4,
}

// eventOutcome is the worst recipient outcome: "delivered" means all got it.
func eventOutcome(subs []SubscriptionDelivery) Outcome {
	worst := OutcomeSkipped
	for i, s := range subs {
		if i == 0 || outcomeRank[s.Outcome] > outcomeRank[worst] {
			worst = s.Outcome
		}
	}
	return worst
}

// SubscriptionDelivery is what became of one subscription's delivery.
type SubscriptionDelivery struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	Outcome        Outcome   `json:"outcome"`
	Attempts       int       `json:"attempts"` // attempts made (and recorded)
}

// DeliveryResult lists every recipient's outcome and the event's, the worst.
type DeliveryResult struct {
	Subscriptions []SubscriptionDelivery `json:"subscriptions"`
	Outcome       Outcome                `json:"outcome"`
}

// DeliveryWorkflow delivers one event to each recipient, in a coroutine each
// so a slow endpoint never delays the others, until an attempt succeeds, the
// receiver answers 410, the schedule ends or the subscription goes. The run
// ends once no recipient has an attempt due and no signal waits.
func DeliveryWorkflow(ctx workflow.Context, in *DeliveryInput) (*DeliveryResult, error) {
	d := &delivery{in: in, byID: map[uuid.UUID]*recipient{}, asked: map[string]bool{}, maxWait: longestWait(in.Schedule)}
	return d.run(ctx)
}

type delivery struct {
	in      *DeliveryInput
	byID    map[uuid.UUID]*recipient
	asked   map[string]bool // Redelivery.ID of the signals taken
	order   []*recipient
	active  int
	maxWait time.Duration // the schedule's longest wait
}

var deliveryActs *activities.Activities

func (d *delivery) run(ctx workflow.Context) (*DeliveryResult, error) {
	setAttributes := startedWithAttributes(ctx)
	for _, id := range d.in.Recipients {
		r := d.add(id)
		r.madeKnown = true
		d.spawn(ctx, r, d.deliverScheduled)
	}
	// Signals are taken here, not in a coroutine, so one condition sees both
	// that no coroutine works and that none waits in the channel.
	signals := workflow.GetSignalChannel(ctx, RedeliverSignal)
	for {
		err := workflow.Await(ctx, func() bool { return d.active == 0 || signals.Len() > 0 })
		if err != nil {
			break // cancelled: every coroutine sees it too
		}
		took := false
		for {
			// A fresh value: decoding keeps the members a payload omits.
			var req Redelivery
			if !signals.ReceiveAsync(&req) {
				break
			}
			took = true
			d.ask(ctx, req)
		}
		if !took && d.active == 0 {
			break
		}
	}
	if ctx.Err() != nil && workflow.GetVersion(ctx, cancelledOutcomeChange, workflow.DefaultVersion, 1) == 1 {
		// Cancelled: the coroutines still at work would each mark their
		// recipient "error" when next scheduled, but the result is built
		// now, and a recipient between attempts would report the
		// "exhausted" of its last attempt.
		for _, r := range d.order {
			if r.running {
				r.out.Outcome = OutcomeError
			}
		}
	}
	res := &DeliveryResult{Subscriptions: make([]SubscriptionDelivery, len(d.order))}
	for i, r := range d.order {
		res.Subscriptions[i] = r.out
	}
	res.Outcome = eventOutcome(res.Subscriptions)
	if setAttributes && !d.redeliveryRunWithoutOutcome(ctx) {
		upsert(ctx, searchattr.Outcome.ValueSet(string(res.Outcome)))
	}
	return res, nil
}

// redeliveryRunOutcomeChange versions leaving Outcome unset on a
// redelivery's run (Redelivery input: a redelivery or a recovery of a
// closed event). Outcome is the event's delivery, set once by the run the
// outbox started, so `Outcome = "exhausted"` counts events, not runs; a
// redelivery's result is in its run's result and its attempt records. It
// is asked for only by redelivery runs.
const redeliveryRunOutcomeChange = "redelivery-run-outcome"

func (d *delivery) redeliveryRunWithoutOutcome(ctx workflow.Context) bool {
	return d.in.Redelivery && workflow.GetVersion(ctx, redeliveryRunOutcomeChange, workflow.DefaultVersion, 1) == 1
}

// cancelledOutcomeChange versions the outcome of a cancelled run's
// recipients still at work ("error", not their last attempt's outcome). It
// is asked for only once cancelled, so no other run records a marker.
const cancelledOutcomeChange = "cancelled-outcome"

// startedWithAttributes reads the started event, so it is deterministic. A
// run started without search attributes (startOrBare) sets none: on a
// namespace lacking Outcome the upsert would fail every workflow task.
func startedWithAttributes(ctx workflow.Context) bool {
	_, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(searchattr.EventID)
	return ok
}

// upsert sets search attributes, logging a refusal (only a malformed update).
func upsert(ctx workflow.Context, updates ...temporal.SearchAttributeUpdate) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Error("search attributes not set", "error", err)
	}
}
