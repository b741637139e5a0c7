package workflows

import (
	"context"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/models"
)

// SignalRedeliver asks for one more attempt of an event to one of its
// subscriptions, now, through the event's own delivery workflow
// (DeliveryWorkflowID), so that every attempt of the event, scheduled or
// asked for, is made by one run at a time and numbered in one sequence:
//
//   - while the event's run is open, the signal reaches it (RedeliverSignal);
//   - once it has closed, the signal starts a new run of the same ID
//     (WorkflowIDReusePolicy ALLOW_DUPLICATE), marked Redelivery, which
//     reads how many attempts were recorded and makes the next.
//
// The Web UI lists every run of the ID, each redelivery a signal in its
// history. The event must have been dispatched (its first run started):
// before that a redelivery's run would take the ID and the outbox's start
// would find it and deliver nothing more, so callers refuse undispatched
// events. As StartDelivery, a start refused for its search attributes is
// made again without them.
//
// attempt, when not 0, is the attempt number asked for (Redelivery.Attempt):
// the signal adds no attempt once the recipient has made or been asked for
// that one, which makes a recovery's signal safe to send twice. The API
// sends 0: one more attempt, always.
func SignalRedeliver(ctx context.Context, c client.Client, ev models.Event, subID uuid.UUID, taskQueue, requestID string, attempt int) error {
	options := func(listed int) client.StartWorkflowOptions {
		opts := DeliveryStartOptions(ev, taskQueue, listed)
		opts.EnableEagerStart = false
		opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
		opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED
		opts.StaticSummary = "Redeliver " + string(ev.Type) + " event"
		return opts
	}
	// As StartDelivery: every recipient listed, then (a default cluster's
	// 2 KB per value) the first subscriptionIDsFit, then none.
	tries := []client.StartWorkflowOptions{options(0)}
	if len(ev.Recipients) > subscriptionIDsFit {
		tries = append(tries, options(subscriptionIDsFit))
	}
	in := &DeliveryInput{EventID: ev.ID, Redelivery: true}
	sig := Redelivery{SubscriptionID: subID, RequestID: requestID, Attempt: attempt}
	_, err := startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, RedeliverSignal, sig, opts, DeliveryWorkflow, in)
		return err
	}, tries...)
	return err
}
