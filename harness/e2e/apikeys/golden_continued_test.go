package apikeys_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A key rotated more often than one run of its workflow wakes
// (workflows.DeadlineTimerStepsPerRun): the run continues as new, and the
// new run reads the key first, so no rotation is lost. The first run's
// history is the golden history apikey_continued.json of
// testenv.GoldenRelease: the one path of the deadline timer the other
// goldens do not take (WebhookSecret shares the code).
func TestAPIKeyContinuedGoldenHistory(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	var k models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey,
		map[string]any{"name": "continued", "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)}, http.StatusCreated, &k)
	id := workflows.APIKeyWorkflowID(k.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var firstRun string
	for firstRun == "" {
		if d, err := env.Temporal.DescribeWorkflowExecution(ctx, id, ""); err == nil {
			firstRun = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		} else if ctx.Err() != nil {
			t.Fatalf("no workflow for the key: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Each rotation, once synced, wakes the run once; rotations the relay
	// folds into one signal wake it once between them, so rotate until it
	// has continued, within a bound.
	for i := 0; ; i++ {
		if i > 4*workflows.DeadlineTimerStepsPerRun {
			t.Fatalf("%d rotations and the first run has not continued as new", i)
		}
		env.DoJSON(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), env.AdminKey,
			map[string]any{"gracePeriodSeconds": 600}, http.StatusOK, nil)
		synced(t, env, k)
		d, err := env.Temporal.DescribeWorkflowExecution(ctx, id, firstRun)
		if err != nil {
			t.Fatal(err)
		}
		if d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			break
		}
	}
	h := env.RunHistory(t, id, firstRun)
	last := h.GetEvents()[len(h.GetEvents())-1]
	if last.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
		t.Fatalf("the first run ended with %v", last.GetEventType())
	}
	// The continued run holds the key's last rotation: its grace period
	// ends at the stored time, not at the first run's.
	if st, _ := stored(t, env, k.ID); st != string(models.KeyRotating) {
		t.Fatalf("stored status %q after the rotations, want rotating", st)
	}
	testenv.RecordGolden(t, h, "apikey_continued.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.APIKey) })
}

// synced waits until the relay has told the key's workflow of its last
// change, and a moment more for the workflow to wake on it.
func synced(t *testing.T, env *testenv.Env, k models.APIKey) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var done bool
		err := env.DB.QueryRowContext(context.Background(),
			"SELECT lifecycle_synced_seq = lifecycle_seq FROM api_keys WHERE id = ?", k.ID).Scan(&done)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			time.Sleep(30 * time.Millisecond)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the key's change was not synced within 10 s")
		}
	}
}
