package workflows

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

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
// Temporal refuses a search attribute value above 2 KB by default
// (frontend.searchAttributesSizeOfValueLimit), which holds the ids of
// subscriptionIDsFit recipients, and the fan-out cap allows more. A start
// listing them all is tried first, so a cluster configured for more (our
// compose file, make stack and the embedded server allow 8 KB) lists every
// recipient; refused as invalid, the start is made again listing the first
// subscriptionIDsFit, so a default cluster still delivers the event, and
// only the lists of its later recipients miss it.
func StartDelivery(ctx context.Context, c client.Client, ev models.Event, taskQueue string, schedule []time.Duration) (client.WorkflowRun, error) {
	in := &DeliveryInput{EventID: ev.ID, Schedule: schedule, Recipients: ev.Recipients}
	run, err := c.ExecuteWorkflow(ctx, DeliveryStartOptions(ev, taskQueue, 0), DeliveryWorkflow, in)
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && len(ev.Recipients) > subscriptionIDsFit {
		return c.ExecuteWorkflow(ctx, DeliveryStartOptions(ev, taskQueue, subscriptionIDsFit), DeliveryWorkflow, in)
	}
	return run, err
}

// subscriptionIDsFit is how many subscription ids a KeywordList value of
// Temporal's default 2 KB limit holds: each id takes 36 bytes, its quotes
// and a comma 3 more, and the brackets 2 (39n + 1 <= 2048).
const subscriptionIDsFit = 52

// deliveryAttributes are the search attributes a delivery starts with.
// An event of a release before recipients were fixed at acceptance has
// none in its input; its workflow sets SubscriptionIds once it has
// planned them.
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
	case 0: // planned by the workflow (an event of an earlier release)
	case 1:
		s += " to 1 subscription"
	default:
		s += " to " + strconv.Itoa(n) + " subscriptions"
	}
	return s
}
