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
		// A delivery to two subscriptions, one answering 500 then 200, the
		// other 200 at once: both first attempts local activities of the
		// first workflow task, the flaky one's attempt 2 a regular activity
		// after its timer; Outcome upserted as it ends.
		"delivery_control_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// A redeliver signal during an hour's wait makes attempt 2 at once;
		// delivered, the wait is cancelled.
		"delivery_redelivery_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// A redelivery's run of the closed event reads the two recorded
		// attempts and makes attempt 3.
		"delivery_redelivery_run_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// A key created expiring, rotated with grace, then expired.
		"apikey_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.APIKey) },
		// A recovery of five failed deliveries in pages of two, two pages
		// a run: the first run redelivers two pages and continues as new;
		// the second resumes from the carried cursor, redelivers the last
		// page and completes.
		"recover_history.json":           func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.RecoverWorkflow) },
		"recover_continued_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.RecoverWorkflow) },
		// A signing secret rotated with grace, its start's own signal waking
		// the first wait at once, rotated again during the wait (the timer
		// cancelled), then the grace period's end: the previous secret
		// erased, the workflow idle.
		"webhook_secret_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.WebhookSecret) },
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
