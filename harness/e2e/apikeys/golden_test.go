package apikeys_test

import (
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A key's whole life in one history: created expiring in 4 s, rotated with
// 1 s of grace (a signal), the grace ending, then the expiry. The history
// replays against today's code, and RECORD_HISTORIES=1 saves it as the
// golden history apikey.json of testenv.GoldenRelease, which the workflows package replays on
// every test run.
func TestAPIKeyGoldenHistory(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	var k models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey,
		map[string]any{"name": "golden", "expiresAt": time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)}, http.StatusCreated, &k)
	env.DoJSON(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), env.AdminKey,
		map[string]any{"gracePeriodSeconds": 1}, http.StatusOK, nil)
	if o := outcome(t, env, k.ID); o != workflows.APIKeyOutcomeExpired {
		t.Fatalf("workflow ended %q, want expired", o)
	}
	testenv.RecordGolden(t, env.History(t, workflows.APIKeyWorkflowID(k.ID)), "apikey.json",
		func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.APIKey) })
}
