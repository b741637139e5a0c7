package webhooks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// The worker puts a daily retention schedule in place; a run deletes the
// delivery records older than DELIVERY_RETENTION and keeps the rest.
func TestRetentionSchedule(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.DeliveryRetention = 48 * time.Hour })
	ctx := context.Background()
	hook := subscribe(t, env, nil, map[string]any{"url": "https://hooks.example.com", "eventTypes": []string{"test.created"}})
	ev, err := env.Store.Events().Create(ctx, models.NewEvent{WorkspaceID: env.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Mark it dispatched so the sweeper leaves it alone.
	if err := env.Store.Events().MarkManyDispatched(ctx, []uuid.UUID{ev.ID}); err != nil {
		t.Fatal(err)
	}
	for i, age := range []time.Duration{72 * time.Hour, 49 * time.Hour, time.Hour} {
		_, _, err := env.Store.Deliveries().Record(ctx, models.WebhookDelivery{
			SubscriptionID: hook.ID, EventID: ev.ID, AttemptNumber: i + 1, DateCreated: time.Now().Add(-age),
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	h := env.Temporal.ScheduleClient().GetHandle(ctx, workflows.RetentionScheduleID(env.Config.TaskQueue))
	var desc *client.ScheduleDescription
	deadline := time.Now().Add(15 * time.Second)
	for desc == nil {
		desc, err = h.Describe(ctx)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("no retention schedule: %v", err)
			}
			desc = nil
			time.Sleep(200 * time.Millisecond)
		}
	}
	if len(desc.Schedule.Spec.Calendars) != 1 {
		t.Fatalf("schedule spec %+v, want one daily calendar entry", desc.Schedule.Spec)
	}
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		raw := records(t, env, hook, 0)
		if len(raw) == 1 {
			var d models.WebhookDelivery
			_ = json.Unmarshal(raw[0], &d)
			if d.AttemptNumber != 3 {
				t.Fatalf("retention kept attempt %d, want the recent attempt 3", d.AttemptNumber)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records after the retention run, want 1", len(raw))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A worker starting again (here with another retention) updates the
	// schedule in place instead of failing.
	if err := worker.EnsureRetentionSchedule(ctx, env.Temporal, env.Config.TaskQueue, 30*24*time.Hour); err != nil {
		t.Fatalf("ensure again: %v", err)
	}
	desc, err = h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	action, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || len(action.Args) != 1 {
		t.Fatalf("schedule action %+v", desc.Schedule.Action)
	}
	var in workflows.RetentionInput
	payload, _ := action.Args[0].(*commonpb.Payload)
	if err := converter.GetDefaultDataConverter().FromPayload(payload, &in); err != nil || time.Duration(in.Retention) != 30*24*time.Hour {
		t.Fatalf("schedule input %+v (%v), want the new retention", in, err)
	}
}
