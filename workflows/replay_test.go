package workflows_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

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
		// The same with recipients in the input; every attempt a regular
		// activity (version 1 of recipients-fixed-at-acceptance).
		"delivery_recipients_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// The same with both first attempts local activities of the first
		// workflow task (version 2): the flaky one's attempt 2 a regular
		// activity after its timer.
		"delivery_first_attempt_local_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// The same, started with search attributes, upserting Outcome as
		// it ends (version 3); attempts, timers and the workflow carry
		// summaries.
		"delivery_outcome_attribute_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// The same of version 4 (deliveryControl).
		"delivery_control_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// Version 4: a redeliver signal during an hour's wait makes attempt
		// 2 at once; delivered, the wait is cancelled.
		"delivery_redelivery_history.json": func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) },
		// Version 4: a redelivery's run of the closed event reads the two
		// recorded attempts and makes attempt 3.
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

// During a rolling deploy a worker of the previous release may run a
// workflow whose input (from the new API or sweeper) carries recipients:
// it ignores them and plans. That history, the legacy golden history with
// recipients added to its input, must still replay on today's code.
func TestDeliveryReplaysAnOldWorkersRunOfANewInput(t *testing.T) {
	h, err := client.HistoryFromJSON(mustOpen(t, "testdata/delivery_history.json"), client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started := h.Events[0].GetWorkflowExecutionStartedEventAttributes()
	var in map[string]any
	if err := json.Unmarshal(started.Input.Payloads[0].Data, &in); err != nil {
		t.Fatal(err)
	}
	in["recipients"] = []string{uuid.NewString()} // whatever they were, the old worker planned
	if started.Input.Payloads[0].Data, err = json.Marshal(in); err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(workflows.DeliveryWorkflow)
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
