package workflows

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/models"
)

// DeliveryWorkflowID is the ID of an event's delivery workflow.
func DeliveryWorkflowID(eventID uuid.UUID) string { return "webhook-event:" + eventID.String() }

// DeliveryStartOptions start an event's delivery so that starting it again
// is harmless: a running workflow is reused, and a finished one is not run
// again (the start returns the earlier run), so nothing is delivered twice.
//
// Eager start: the worker's outbox dispatcher starts workflows through the
// worker's own client, so when the worker has a free workflow-task slot the
// server hands the first task back in the start's response, skipping the
// task queue's round trip (the usual first delivery finishes in that one
// task). Without a free slot, or from another client, it is an ordinary
// start.
//
// Search attributes: the event's workspace, type and id, and its
// recipients (SubscriptionIds), at most listed of them (0: all); see
// StartDelivery. The Outcome attribute is the workflow's to set.
func DeliveryStartOptions(ev models.Event, taskQueue string, listed int) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       DeliveryWorkflowID(ev.ID),
		TaskQueue:                taskQueue,
		EnableEagerStart:         true,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    deliveryAttributes(ev, listed),
		StaticSummary:            deliverySummary(ev),
	}
}

// StartDelivery starts the delivery workflow of a stored event (see
// DeliveryStartOptions), with its retry schedule fixed into the input.
//
// The search attributes are for operators and never a condition of
// delivery, so a start the server refuses as invalid is made again with
// less, and at the end with none:
//
//  1. Every recipient listed in SubscriptionIds. Temporal refuses a value
//     above 2 KB by default (frontend.searchAttributesSizeOfValueLimit),
//     which holds the ids of subscriptionIDsFit recipients, and the
//     fan-out cap allows more; a cluster configured for more (our compose
//     file, make stack and the embedded server allow 8 KB) lists them all.
//  2. With more than subscriptionIDsFit recipients, the first
//     subscriptionIDsFit listed, so a default cluster still has the
//     attributes and only the lists of the event's later recipients miss
//     it.
//  3. No search attributes at all (the summary stays): the namespace does
//     not define them ("no mapping defined": Temporal Cloud, where the
//     worker may not register them; a namespace made by hand before an
//     operator created them; the seconds after a worker registered them,
//     until the server's namespace cache sees them). The workflow then
//     sets none either (see startedWithAttributes), and the event is
//     delivered, only not findable by them in the Web UI; the worker's
//     log says why (worker.KeepSearchAttributes), and the caller, told by
//     bare, logs each such start.
//
// Any other error is returned, and the outbox retries the event; when the
// start without attributes fails too, the error says why the one with them
// did.
func StartDelivery(ctx context.Context, c client.Client, ev models.Event, taskQueue string, schedule []time.Duration) (run client.WorkflowRun, bare bool, err error) {
	in := &DeliveryInput{EventID: ev.ID, Schedule: activities.Durations(schedule), Recipients: ev.Recipients}
	tries := []client.StartWorkflowOptions{DeliveryStartOptions(ev, taskQueue, 0)}
	if len(ev.Recipients) > subscriptionIDsFit {
		tries = append(tries, DeliveryStartOptions(ev, taskQueue, subscriptionIDsFit))
	}
	bare, err = startOrBare(func(opts client.StartWorkflowOptions) (err error) {
		run, err = c.ExecuteWorkflow(ctx, opts, DeliveryWorkflow, in)
		return err
	}, tries...)
	if err != nil {
		return nil, false, err
	}
	return run, bare, nil
}

// subscriptionIDsFit is how many subscription ids a KeywordList value of
// Temporal's default 2 KB limit holds: each id takes 36 bytes, its quotes
// and a comma 3 more, and the brackets 2 (39n + 1 <= 2048).
const subscriptionIDsFit = 52

// deliveryAttributes are the search attributes a delivery starts with.
func deliveryAttributes(ev models.Event, listed int) temporal.SearchAttributes {
	updates := []temporal.SearchAttributeUpdate{
		searchattr.WorkspaceID.ValueSet(ev.WorkspaceID.String()),
		searchattr.EventType.ValueSet(string(ev.Type)),
		searchattr.EventID.ValueSet(ev.ID.String()),
	}
	if len(ev.Recipients) > 0 {
		updates = append(updates, searchattr.SubscriptionIDs.ValueSet(subscriptionIDs(ev.Recipients, listed)))
	}
	return temporal.NewSearchAttributes(updates...)
}

// subscriptionIDs are the first n ids as strings (all when n is 0).
func subscriptionIDs(ids []uuid.UUID, n int) []string {
	if n <= 0 || n > len(ids) {
		n = len(ids)
	}
	out := make([]string, n)
	for i, id := range ids[:n] {
		out[i] = id.String()
	}
	return out
}

// deliverySummary is the one line the Web UI shows for the workflow: what
// it delivers to how many, never a URL.
func deliverySummary(ev models.Event) string {
	s := "Deliver " + string(ev.Type) + " event"
	switch n := len(ev.Recipients); n {
	case 0: // nothing to count (the outbox starts no delivery without recipients)
	case 1:
		s += " to 1 subscription"
	default:
		s += " to " + strconv.Itoa(n) + " subscriptions"
	}
	return s
}
