package workflows_test

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/workflows"
)

// The history of a real delivery (captured from the end-to-end setup: two
// subscriptions, one answering 500 then 200, the other 200 at once) must
// replay against the current workflow code. A change that breaks it would
// break deliveries in flight during a deploy: version it with
// workflow.GetVersion, then capture a new history beside this one.
func TestDeliveryWorkflowReplays(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(workflows.DeliveryWorkflow)
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/delivery_history.json"); err != nil {
		t.Fatal(err)
	}
}
