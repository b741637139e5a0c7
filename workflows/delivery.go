package workflows

import (
	"hash/fnv"
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
// subscriptions fixed when the event was accepted (events.recipients); nil
// only in the histories of workflows started before they were recorded,
// which plan their recipients in a local activity instead.
//
// JSON names match the earlier untagged field names case-insensitively, so
// the inputs of running workflows still decode.
//
// Redelivery marks a run started by a redelivery after the event's earlier
// runs closed (SignalRedeliver): it makes only the attempts its redeliver
// signals ask for, numbered after those already recorded.
type DeliveryInput struct {
	EventID    uuid.UUID       `json:"eventId"`
	Schedule   []time.Duration `json:"schedule"`
	Recipients []uuid.UUID     `json:"recipients"`
	Redelivery bool            `json:"redelivery,omitempty"`
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
// worst of them (empty in results of workflows started before it was
// reported).
type DeliveryResult struct {
	Subscriptions []SubscriptionDelivery `json:"subscriptions"`
	Outcome       Outcome                `json:"outcome,omitempty"`
}

// DeliveryWorkflow delivers one event to each of its recipients (the
// subscriptions enabled for its type when it was accepted), each on its own
// schedule in its own coroutine, so one slow or dead endpoint never delays
// the others. A recipient disabled or deleted since is skipped at its next
// attempt. Every recipient's attempt 1 is a local activity made in the
// first workflow task (firstAttemptOptions), so an event its receivers
// accept at once costs one workflow task; retries are regular activities
// after durable timers.
func DeliveryWorkflow(ctx workflow.Context, in *DeliveryInput) (*DeliveryResult, error) {
	d := &delivery{in: in}
	return d.run(ctx)
}

type delivery struct {
	in *DeliveryInput
	// localFirst: attempt 1 runs as a local activity (firstAttemptLocal).
	localFirst bool
	// control: the run honours throttling, receivers' Retry-After and
	// redeliver signals (deliveryControl); see delivery_control.go.
	control *control
}

var deliveryActs *activities.Activities

// planOptions: workflows started before recipients were fixed at
// acceptance find them in one short read, run as a local activity. No
// workflow of ours gives up because the database is away, so the attempts
// are bounded only by a schedule-to-close far beyond any outage (for a
// local activity a zero schedule-to-close would mean the start-to-close,
// 10 s, which is how a 10-second database blip once lost events).
//
// Past the workflow task timeout each local retry costs a timer and a
// workflow task in the history, so the interval grows to 10 minutes: a
// month of outage then stays near 26,000 events, inside the 51,200 limit.
var planOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    10 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Minute,
		MaximumAttempts: untilScheduleToClose},
}

// attemptOptions: an attempt's HTTP outcome is its result, never an error,
// so Temporal retries an attempt only for infrastructure failures (worker
// lost mid-attempt, database down, a secret this worker's keys cannot
// open), and the activity makes such retries idempotent. Every such error
// is retryable: another try, perhaps on another replica, can succeed. The
// start-to-close covers connect, TLS, response and the database; the
// schedule-to-close is set deliberately to OutageTolerance (unset, it
// would be unlimited, which is no better and hides the intent).
var attemptOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    45 * time.Second,
	ScheduleToCloseTimeout: OutageTolerance,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: untilScheduleToClose,
	},
}

// firstAttemptOptions: attempt 1 of every recipient runs as a local
// activity, all of them side by side inside the event's first workflow
// task, so an event whose receivers answer at once completes in that one
// task: no activity task to schedule, dispatch and report, no second
// workflow task. Its outcome is a marker in the history.
//
// No retries here (MaximumAttempts 1): a local attempt that returns an
// error (the database away, a secret this worker cannot open, the deadline
// below) hands attempt 1, with the same number, to the regular activity and
// its durable retries (attemptOptions), which find the record if the local
// run wrote one. Local retries would instead hold the workflow task, or
// past its timeout add a timer and a task per retry.
//
// Slow receivers: an attempt takes at most activities.MaxAttemptDuration
// (20 s: connect, TLS, response) plus its two database round trips. That is
// longer than the workflow task timeout (10 s by default); past 80% of it
// the SDK heartbeats the task (completes it, recording the markers of the
// attempts already finished and the timers of their retries, and opens the
// next one), so a slow receiver costs one or two extra workflow tasks and
// never delays the other recipients' requests or records; the timers of
// their retries start when the task completes or heartbeats (at most about
// 8 s late). The start-to-close leaves 10 s beyond the request for the
// database, so the deadline only cuts an attempt that is stuck; one cut
// after its POST was answered would be made again by the regular activity
// (at least once: a duplicate receipt with the same webhook-id, still one
// record). The schedule-to-close adds 10 s for waiting for one of the
// worker's local-activity slots, and it counts from scheduling: an attempt
// that starts with less than a whole request's time left before it gives
// up before sending (activities.ErrLocalAttemptLate), and the regular
// activity makes it, so a deadline never cuts a request it let start.
//
// A worker lost during the local attempt: the workflow task times out and
// is retried on another worker, which runs the local attempt again. Attempt
// 1 is made again if its record was not written (at least once, same
// webhook-id), and there is still exactly one record: AttemptDelivery
// returns a record already written, and of two runs racing the insert's
// ON CONFLICT keeps the first.
var firstAttemptOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    activities.MaxAttemptDuration + 10*time.Second,
	ScheduleToCloseTimeout: activities.MaxAttemptDuration + 20*time.Second,
	RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
}

// recipientsChange versions the delivery workflow's changes, in order:
//
//   - DefaultVersion (no marker): recipients planned at run time. A history
//     recorded by a worker of a release before version 1 has no marker: it
//     planned (even if its input carried recipients, which that worker
//     ignored), so its replay must plan too.
//   - 1: recipients read from the input; every attempt a regular activity.
//   - 2 (firstAttemptLocal): attempt 1 of every recipient a local activity
//     in the first workflow task (firstAttemptOptions).
//   - 3 (outcomeAttribute): the Outcome search attribute upserted as the
//     delivery ends (and SubscriptionIds once planned, when the input
//     had no recipients), by a workflow started with its attributes
//     (startedWithAttributes).
//   - 4 (deliveryControl): throttled attempts wait and are made again
//     with the same number, a receiver's Retry-After lengthens the next
//     wait, and redeliver signals add attempts (delivery_control.go).
//
// Versions 2 and 3 bump this change ID rather than adding new ones: each
// GetVersion of a new ID costs every new workflow two more history events,
// a marker and a TemporalChangeVersion search attribute upsert (neither
// billed, both written by the server), and one ID orders the versions just
// as well. The ID keeps its first change's name because histories hold it.
const recipientsChange = "recipients-fixed-at-acceptance"

// Versions of recipientsChange.
const (
	// firstAttemptLocal: attempt 1 is made locally.
	firstAttemptLocal workflow.Version = 2
	// outcomeAttribute: the workflow sets its Outcome search attribute.
	outcomeAttribute workflow.Version = 3
	// deliveryControl: throttling, Retry-After and redeliveries.
	deliveryControl workflow.Version = 4
)

func (d *delivery) run(ctx workflow.Context) (*DeliveryResult, error) {
	recipients := d.in.Recipients
	version := workflow.GetVersion(ctx, recipientsChange, workflow.DefaultVersion, deliveryControl)
	if version == workflow.DefaultVersion {
		recipients = nil
	}
	d.localFirst = version >= firstAttemptLocal
	setAttributes := version >= outcomeAttribute && startedWithAttributes(ctx)
	if version >= deliveryControl {
		return d.runControlled(ctx, recipients, setAttributes)
	}
	// nil: a history from before the change, or an input from an API of
	// the previous release during a rolling deploy.
	if recipients == nil {
		var err error
		if recipients, err = d.plan(ctx, setAttributes); err != nil {
			return nil, err
		}
	}
	res := &DeliveryResult{Subscriptions: make([]SubscriptionDelivery, len(recipients))}
	wg := workflow.NewWaitGroup(ctx)
	for i, id := range recipients {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			res.Subscriptions[i] = d.deliverTo(ctx, id)
		})
	}
	wg.Wait(ctx)
	res.Outcome = eventOutcome(res.Subscriptions)
	if setAttributes {
		upsert(ctx, searchattr.Outcome.ValueSet(string(res.Outcome)))
	}
	return res, nil
}

// plan finds the recipients of an event whose input has none (a history
// from before they were fixed at acceptance, or an input from an API of the
// previous release during a rolling deploy) in a local activity.
func (d *delivery) plan(ctx workflow.Context, setAttributes bool) ([]uuid.UUID, error) {
	var plan activities.DeliveryPlan
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, planOptions), deliveryActs.PlanDelivery,
		&activities.PlanDeliveryInput{EventID: d.in.EventID}).Get(ctx, &plan)
	if err != nil {
		return nil, err
	}
	if setAttributes && len(plan.SubscriptionIDs) > 0 {
		// Within Temporal's default value limit: the server terminates a
		// workflow whose upsert carries a value over the per-value limit
		// or brings its attributes over the total limit (40 KB by default;
		// ours stay far below), rather than failing its task
		// (checkIfSearchAttributesSizeExceedsLimit).
		upsert(ctx, searchattr.SubscriptionIDs.ValueSet(subscriptionIDs(plan.SubscriptionIDs, subscriptionIDsFit)))
	}
	return plan.SubscriptionIDs, nil
}

// startedWithAttributes: the workflow was started with its search
// attributes (EventId among them), so its namespace defines them. One
// started without them (StartDelivery's last resort, on a namespace that
// lacks them, or an earlier release's start during a rolling deploy) sets
// none: on a namespace that lacks Outcome the server would fail the
// workflow task of the upsert on every retry (BAD_SEARCH_ATTRIBUTES), and
// the delivery would never complete. Deterministic: the started event
// holds the attributes, and the check runs before the workflow upserts
// any.
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

// deliverTo makes attempt 1 at once (see attempt), then one attempt after
// each wait of the schedule, until one succeeds, the receiver answers 410,
// or the subscription is disabled or deleted.
func (d *delivery) deliverTo(ctx workflow.Context, subID uuid.UUID) SubscriptionDelivery {
	out := SubscriptionDelivery{SubscriptionID: subID, Outcome: OutcomeExhausted}
	last := len(d.in.Schedule) + 1
	host := "" // the receiver's host, once an attempt has reported it
	for n := 1; n <= last; n++ {
		summary := attemptSummary(n, host, subID)
		if n > 1 {
			// The same timer as workflow.Sleep's, labelled for the history.
			wait := workflow.NewTimerWithOptions(ctx, RetryDelay(d.in.Schedule[n-2], d.in.EventID, subID, n),
				workflow.TimerOptions{Summary: "wait for " + summary})
			if err := wait.Get(ctx, nil); err != nil {
				out.Outcome = OutcomeError // cancelled
				return out
			}
		}
		r, err := d.attempt(ctx, summary, &activities.AttemptInput{
			EventID: d.in.EventID, SubscriptionID: subID, AttemptNumber: n, Final: n == last,
		})
		if r.Host != "" {
			host = r.Host
		}
		if err != nil {
			workflow.GetLogger(ctx).Error("delivery attempt could not be made",
				"subscriptionId", subID.String(), "attempt", n, "error", err)
			out.Outcome = OutcomeError
			return out
		}
		switch r.Outcome {
		case activities.AttemptSkipped:
			out.Outcome = OutcomeSkipped
			return out
		case activities.AttemptDelivered:
			out.Attempts, out.Outcome = n, OutcomeDelivered
			return out
		case activities.AttemptGone:
			out.Attempts, out.Outcome = n, OutcomeGone
			return out
		}
		out.Attempts = n
	}
	return out
}

// attempt makes one attempt: attempt 1 as a local activity first when the
// history is of version firstAttemptLocal, then (on an error from it, or
// for every other attempt) as a regular activity. summary labels it in the
// event history (a summary is not part of a command's identity, so it
// changes no replay).
func (d *delivery) attempt(ctx workflow.Context, summary string, in *activities.AttemptInput) (activities.AttemptResult, error) {
	var r activities.AttemptResult
	if in.AttemptNumber == 1 && d.localFirst {
		lo := firstAttemptOptions
		lo.Summary = summary
		lctx := workflow.WithLocalActivityOptions(ctx, lo)
		err := workflow.ExecuteLocalActivity(lctx, deliveryActs.AttemptDelivery, in).Get(ctx, &r)
		if err == nil || ctx.Err() != nil {
			return r, err
		}
		workflow.GetLogger(ctx).Warn("the first delivery attempt could not be made locally; making it as a regular activity",
			"subscriptionId", in.SubscriptionID.String(), "error", err)
		r = activities.AttemptResult{}
	}
	o := attemptOptions
	o.Summary = summary
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), deliveryActs.AttemptDelivery, in).Get(ctx, &r)
	return r, err
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
