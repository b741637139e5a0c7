package workflows

import (
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
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
type DeliveryInput struct {
	EventID    uuid.UUID       `json:"eventId"`
	Schedule   []time.Duration `json:"schedule"`
	Recipients []uuid.UUID     `json:"recipients"`
}

// Per-subscription outcomes of a delivery.
const (
	OutcomeDelivered = "delivered" // a 2xx arrived
	OutcomeGone      = "gone"      // 410: no further attempts
	OutcomeSkipped   = "skipped"   // disabled or deleted before an attempt
	OutcomeExhausted = "exhausted" // every attempt of the schedule failed
	OutcomeError     = "error"     // an attempt could not be made (see the workflow's log)
)

// SubscriptionDelivery is what became of one subscription's delivery.
type SubscriptionDelivery struct {
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	Outcome        string    `json:"outcome"`
	Attempts       int       `json:"attempts"` // attempts made (and recorded)
}

// DeliveryResult lists every recipient's outcome.
type DeliveryResult struct {
	Subscriptions []SubscriptionDelivery `json:"subscriptions"`
}

// DeliveryWorkflow delivers one event to each of its recipients (the
// subscriptions enabled for its type when it was accepted), each on its own
// schedule in its own coroutine, so one slow or dead endpoint never delays
// the others. A recipient disabled or deleted since is skipped at its next
// attempt.
func DeliveryWorkflow(ctx workflow.Context, in *DeliveryInput) (*DeliveryResult, error) {
	d := &delivery{in: in}
	return d.run(ctx)
}

type delivery struct{ in *DeliveryInput }

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

// recipientsChange versions the switch from planning recipients at run
// time to reading them from the input. A history recorded by a worker of
// the previous release has no marker: it planned (even if its input carried
// recipients, which that worker ignored), so its replay must plan too.
const recipientsChange = "recipients-fixed-at-acceptance"

func (d *delivery) run(ctx workflow.Context) (*DeliveryResult, error) {
	recipients := d.in.Recipients
	if workflow.GetVersion(ctx, recipientsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		recipients = nil
	}
	// nil: a history from before the change, or an input from an API of
	// the previous release during a rolling deploy.
	if recipients == nil {
		var plan activities.DeliveryPlan
		err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, planOptions), deliveryActs.PlanDelivery,
			&activities.PlanDeliveryInput{EventID: d.in.EventID}).Get(ctx, &plan)
		if err != nil {
			return nil, err
		}
		recipients = plan.SubscriptionIDs
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
	return res, nil
}

// deliverTo makes attempt 1 at once, then one attempt after each wait of
// the schedule, until one succeeds, the receiver answers 410, or the
// subscription is disabled or deleted.
func (d *delivery) deliverTo(ctx workflow.Context, subID uuid.UUID) SubscriptionDelivery {
	out := SubscriptionDelivery{SubscriptionID: subID, Outcome: OutcomeExhausted}
	actx := workflow.WithActivityOptions(ctx, attemptOptions)
	last := len(d.in.Schedule) + 1
	for n := 1; n <= last; n++ {
		if n > 1 {
			if err := workflow.Sleep(ctx, RetryDelay(d.in.Schedule[n-2], d.in.EventID, subID, n)); err != nil {
				out.Outcome = OutcomeError // cancelled
				return out
			}
		}
		var r activities.AttemptResult
		err := workflow.ExecuteActivity(actx, deliveryActs.AttemptDelivery, &activities.AttemptInput{
			EventID: d.in.EventID, SubscriptionID: subID, AttemptNumber: n, Final: n == last,
		}).Get(ctx, &r)
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
