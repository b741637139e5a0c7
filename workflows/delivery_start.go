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

// DeliveryStartOptions make a repeated start return the existing run.
// listed caps SubscriptionIds (0: all).
func DeliveryStartOptions(ev models.Event, taskQueue string, listed int) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       DeliveryWorkflowID(ev.ID),
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    deliveryAttributes(ev, listed),
		StaticSummary:            deliverySummary(ev),
		Priority:                 eventPriority(ev),
	}
}

// StartDelivery starts a stored event's delivery, its retry schedule fixed in
// the input. A start refused as invalid is made again (startOrBare) with at
// most subscriptionIDsFit recipients listed, then without search attributes.
// It asks for the first task with the start (eager), skipping the task
// queue; a worker in this process grants it or not (worker.eagerSlots).
func StartDelivery(ctx context.Context, c client.Client, ev models.Event, taskQueue string, schedule []time.Duration) (run client.WorkflowRun, bare bool, err error) {
	in := &DeliveryInput{EventID: ev.ID, Schedule: activities.Durations(schedule), Recipients: ev.Recipients}
	tries := []client.StartWorkflowOptions{DeliveryStartOptions(ev, taskQueue, 0)}
	if len(ev.Recipients) > subscriptionIDsFit {
		tries = append(tries, DeliveryStartOptions(ev, taskQueue, subscriptionIDsFit))
	}
	for i := range tries {
		tries[i].EnableEagerStart = true
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

// deliverySummary is the workflow's line in the Web UI: never a URL.
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
