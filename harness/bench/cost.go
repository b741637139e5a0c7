package bench

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/harness/temporalcost"
)

// workflowID is the delivery workflow of an event (workflows.DeliveryWorkflowID).
func workflowID(eventID string) string { return "webhook-event:" + eventID }

// historyCost reads an event's delivery workflow history and counts what
// it cost (see temporalcost.Of).
func historyCost(ctx context.Context, tc client.Client, eventID string) (temporalcost.Cost, error) {
	var evs []*historypb.HistoryEvent
	it := tc.GetWorkflowHistory(ctx, workflowID(eventID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return temporalcost.Cost{}, err
		}
		evs = append(evs, ev)
	}
	return temporalcost.Of(evs), nil
}
