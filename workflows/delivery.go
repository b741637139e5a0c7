package workflows

import (
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// DeliveryInput names the event. Schedule holds the waits before attempts
// 2, 3, ... (WEBHOOK_RETRY_SCHEDULE when the event was dispatched); carrying
// it in the input fixes it in the event's history, so a configuration
// change never alters a running delivery or its replay. Recipients are the
// subscriptions fixed when the event was accepted (events.recipients).
//
// Redelivery marks a run started by a redelivery after the event's earlier
// runs closed (SignalRedeliver). Such a run has no recipients and no
// schedule: it makes only the attempts its redeliver signals ask for,
// numbered after those already recorded.
type DeliveryInput struct {
	EventID    uuid.UUID             `json:"eventId"`
	Schedule   []activities.Duration `json:"schedule"`
	Recipients []uuid.UUID           `json:"recipients"`
	Redelivery bool                  `json:"redelivery,omitempty"`
}

// Outcome is what became of an event's delivery to one subscription. The
// worst of its recipients' outcomes is the event's (see eventOutcome), and
// its workflow's Outcome search attribute.
type Outcome string

// Outcomes of a delivery, best first: eventOutcome ranks them in this order.
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

// eventOutcome is the worst outcome among an event's recipients, so that
// `Outcome = "delivered"` lists the events every recipient got, and
// `Outcome = "exhausted"` those at least one recipient never got (and none
// failed worse). An event with no recipient left to try was skipped.
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

// DeliveryResult lists every recipient's outcome, and the event's: the
// worst of them.
type DeliveryResult struct {
	Subscriptions []SubscriptionDelivery `json:"subscriptions"`
	Outcome       Outcome                `json:"outcome"`
}

// DeliveryWorkflow delivers one event to each of its recipients (the
// subscriptions enabled for its type when it was accepted), each on its own
// schedule in its own coroutine, so one slow or dead endpoint never delays
// the others (delivery_recipient.go). A recipient disabled or deleted since
// is skipped at its next attempt. Every recipient's attempt 1 is a local
// activity made in the first workflow task, so an event its receivers
// accept at once costs one workflow task; retries are regular activities
// after durable timers (delivery_attempt.go). Beside the schedule:
//
//   - throttling: an attempt the subscription's limits refuse
//     (activities.AttemptThrottled: its rate limit, its attempts in flight,
//     or a receiver's Retry-After pause) is made again with the same
//     number after the wait the activity names, outside the schedule;
//   - back-pressure: a receiver's Retry-After on a failed attempt
//     lengthens the wait before the next scheduled one, up to the
//     schedule's longest wait;
//   - redeliveries: each RedeliverSignal adds one attempt to one
//     subscription now, numbered after those already made
//     (delivery_redeliver.go).
//
// The run completes once no recipient has an attempt due and no signal
// waits, so every signal it accepted is served by it. A workflow started
// with its search attributes sets Outcome as it ends.
func DeliveryWorkflow(ctx workflow.Context, in *DeliveryInput) (*DeliveryResult, error) {
	d := &delivery{in: in, byID: map[uuid.UUID]*recipient{}, maxWait: longestWait(in.Schedule)}
	return d.run(ctx)
}

// delivery is the state of a run: its recipients in the order they became
// known (the input's, then those only a redelivery named), and how many of
// them have a coroutine at work.
type delivery struct {
	in      *DeliveryInput
	byID    map[uuid.UUID]*recipient
	order   []*recipient
	active  int
	maxWait time.Duration // the schedule's longest wait
}

// deliveryActs names the activities every workflow of the package calls.
var deliveryActs *activities.Activities

func (d *delivery) run(ctx workflow.Context) (*DeliveryResult, error) {
	setAttributes := startedWithAttributes(ctx)
	for _, id := range d.in.Recipients {
		r := d.add(id)
		r.madeKnown = true
		d.spawn(ctx, r, d.deliverScheduled)
	}
	// Signals are taken here, in the main coroutine, rather than by one of
	// their own: the run may end only when no coroutine works and none
	// waits in the channel, and one condition sees both.
	signals := workflow.GetSignalChannel(ctx, RedeliverSignal)
	for {
		err := workflow.Await(ctx, func() bool { return d.active == 0 || signals.Len() > 0 })
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
		if !took && d.active == 0 {
			break
		}
	}
	res := &DeliveryResult{Subscriptions: make([]SubscriptionDelivery, len(d.order))}
	for i, r := range d.order {
		res.Subscriptions[i] = r.out
	}
	res.Outcome = eventOutcome(res.Subscriptions)
	if setAttributes {
		upsert(ctx, searchattr.Outcome.ValueSet(string(res.Outcome)))
	}
	return res, nil
}

// startedWithAttributes: the workflow was started with its search
// attributes (EventId among them), so its namespace defines them. One
// started without them (StartDelivery's last resort, on a namespace that
// lacks them) sets none: on a namespace that lacks Outcome the server
// would fail the workflow task of the upsert on every retry
// (BAD_SEARCH_ATTRIBUTES), and the delivery would never complete.
// Deterministic: the started event holds the attributes, and the check
// runs before the workflow upserts any.
func startedWithAttributes(ctx workflow.Context) bool {
	_, ok := workflow.GetTypedSearchAttributes(ctx).GetKeyword(searchattr.EventID)
	return ok
}

// upsert sets search attributes. The SDK refuses only malformed updates
// (none of ours is), so a refusal is logged, never allowed to fail a
// delivery that is done.
func upsert(ctx workflow.Context, updates ...temporal.SearchAttributeUpdate) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		workflow.GetLogger(ctx).Error("search attributes not set", "error", err)
	}
}
