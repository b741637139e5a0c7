package workflows_test

import (
	"testing"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/workflows"
)

// Golden histories recorded from the end-to-end setup (RECORD_HISTORIES=1,
// see the README: changing a workflow) must replay against the current
// code. A change that breaks one would break workflows in flight during a
// deploy (a key's workflow sleeps for months): put it behind
// workflow.GetVersion, then record a new history beside the old ones.
func TestWorkflowsReplayGoldenHistories(t *testing.T) {
	for file, register := range map[string]func(worker.WorkflowReplayer){
		// A delivery started before recipients were fixed at acceptance: it
		// plans them in a local activity. Two subscriptions, one answering
		// 500 then 200, the other 200 at once.
		"delivery_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// The same with recipients in the input.
		"delivery_recipients_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// A key created expiring, rotated with grace, then expired.
		"apikey_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.APIKey) },
	} {
		t.Run(file, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			register(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/"+file); err != nil {
				t.Fatal(err)
			}
		})
	}
}
