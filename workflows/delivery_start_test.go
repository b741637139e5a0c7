package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// An event at the fan-out cap lists all its recipients in SubscriptionIds
// where the server allows values that large, and still starts, listing
// the first 52, on a server with Temporal's default 2 KB limit (which
// would refuse the whole list, and the event would wait in the outbox
// forever).
func TestStartDeliveryListsRecipientsWithinTheServersLimit(t *testing.T) {
	recipients := make([]uuid.UUID, 100)
	for i := range recipients {
		recipients[i] = uuid.New()
	}
	for _, c := range []struct {
		limit int
		want  int
	}{{2 << 10, 52}, {devtemporal.DefaultSearchAttributeValueLimit, 100}} {
		srv, err := devtemporal.Start(devtemporal.Options{SearchAttributeValueLimit: c.limit})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Stop()
		tc, err := client.Dial(client.Options{HostPort: srv.Addr()})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ev := models.Event{ID: uuid.New(), WorkspaceID: uuid.New(), Type: models.EventTestCreated, Recipients: recipients}
		// No worker polls this queue: only the start is under test.
		if _, bare, err := workflows.StartDelivery(ctx, tc, ev, "no-worker", nil); err != nil || bare {
			t.Fatalf("limit %d: started without search attributes %v, error %v", c.limit, bare, err)
		}
		desc, err := tc.DescribeWorkflow(ctx, workflows.DeliveryWorkflowID(ev.ID), "")
		if err != nil {
			t.Fatal(err)
		}
		listed, _ := desc.TypedSearchAttributes.GetKeywordList(searchattr.SubscriptionIDs)
		if len(listed) != c.want || listed[0] != recipients[0].String() {
			t.Errorf("limit %d: SubscriptionIds lists %d ids, want the first %d", c.limit, len(listed), c.want)
		}
		if got, _ := desc.TypedSearchAttributes.GetKeyword(searchattr.EventType); got != string(models.EventTestCreated) {
			t.Errorf("EventType %q", got)
		}
		// A redelivery's run (signal-with-start) lists them the same way.
		again := ev
		again.ID = uuid.New()
		if err := workflows.SignalRedeliver(ctx, tc, again, "no-worker", workflows.Redelivery{SubscriptionID: recipients[0], RequestID: "test"}, workflows.PriorityPerson); err != nil {
			t.Fatal(err)
		}
		if desc, err = tc.DescribeWorkflow(ctx, workflows.DeliveryWorkflowID(again.ID), ""); err != nil {
			t.Fatal(err)
		}
		if listed, _ := desc.TypedSearchAttributes.GetKeywordList(searchattr.SubscriptionIDs); len(listed) != c.want {
			t.Errorf("limit %d: a redelivery's run lists %d ids, want %d", c.limit, len(listed), c.want)
		}
	}
}
