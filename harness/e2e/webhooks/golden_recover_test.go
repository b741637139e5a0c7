package webhooks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A recovery, recorded as golden histories. Five deliveries fail their
// whole schedule; the recovery walks them in pages of two and continues as
// new after two pages (the defaults, 100 and 50, take 5,000 failed
// deliveries to get there), so its two runs hold every path a recovery
// that completes takes: the first run starts its progress, redelivers two
// pages (each failed delivery a Redeliver signal to its event's delivery
// workflow, heartbeating the cursor) and continues as new
// (recover.json); the second resumes from the carried progress
// and cursor, redelivers the last, short page and completes
// (recover_continued.json). The progress query answers the
// closed run, as GET .../recover does.
func TestRecoverGoldenHistories(t *testing.T) {
	const n = 5
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = recoverSchedule })
	attempts := len(recoverSchedule) + 1
	statuses := make([]int, n*attempts, n*attempts+1)
	for i := range statuses {
		statuses[i] = http.StatusServiceUnavailable
	}
	rc := newReceiver(t, append(statuses, http.StatusOK)...)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	since := time.Now().Add(-time.Minute).UTC()
	for i := range n {
		publish(t, env, "test.created", map[string]any{"golden": "recover", "n": i})
	}
	eventually(t, time.Minute, "every delivery failed", func() bool {
		return deliveryStatus(t, env, hook.ID, models.DeliveryFailed) == n
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now().UTC()
	// The input the API makes (POST .../recover), with small pages.
	in := &workflows.RecoverInput{
		WorkspaceID: env.WorkspaceID, SubscriptionID: hook.ID, Since: since, Until: now, StartedAt: now,
		PageSize: 2, PagesPerRun: 2,
	}
	firstRun, _, err := workflows.StartRecover(ctx, env.Temporal, in, env.Config.TaskQueue)
	if err != nil {
		t.Fatal(err)
	}
	var p workflows.RecoverProgress
	if err := env.Temporal.GetWorkflow(ctx, workflows.RecoverWorkflowID(hook.ID), "").Get(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if p.ID != firstRun || p.State != models.RecoveryCompleted || p.Found != n || p.Redelivered != n {
		t.Fatalf("recovery %+v, want completed with %d found and redelivered", p.WebhookRecovery, n)
	}
	eventually(t, time.Minute, "every redelivery succeeded", func() bool {
		return deliveryStatus(t, env, hook.ID, models.DeliverySucceeded) == n
	})
	var shown models.WebhookRecovery
	env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()+"/recover"), env.AdminKey, nil, http.StatusOK, &shown)
	if shown.ID != firstRun || shown.State != models.RecoveryCompleted || shown.Found != n {
		t.Fatalf("GET .../recover %+v after the recovery %+v", shown, p.WebhookRecovery)
	}

	first, last := env.RunHistory(t, workflows.RecoverWorkflowID(hook.ID), firstRun), env.History(t, workflows.RecoverWorkflowID(hook.ID))
	requireShape(t, "first run", first, 2, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW)
	requireShape(t, "continued run", last, 1, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)
	register := func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.RecoverWorkflow) }
	testenv.RecordGolden(t, first, "recover.json", register)
	testenv.RecordGolden(t, last, "recover_continued.json", register)
	requireNoSecret(t, hook.Secret, first, last)
}

// requireShape: the history has activities completed activities and ends
// with last, so a golden history holds the paths it is recorded for.
func requireShape(t *testing.T, what string, h *historypb.History, activities int, last enumspb.EventType) {
	t.Helper()
	done := 0
	for _, ev := range h.Events {
		if ev.EventType == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			done++
		}
	}
	if done != activities || len(h.Events) == 0 || h.Events[len(h.Events)-1].EventType != last {
		t.Fatalf("%s: %d activities completed, ends with %v; want %d, %v", what, done, h.Events[len(h.Events)-1].EventType, activities, last)
	}
}
