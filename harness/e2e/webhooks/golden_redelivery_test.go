package webhooks_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Redeliveries, recorded as golden histories: a redeliver signal during
// an hour's wait makes attempt 2 at once (delivered, so the wait is
// cancelled and the run ends: delivery_redelivery.json); a second
// one after the run closed starts a new run of the same ID (Redelivery),
// which reads the two recorded attempts and makes attempt 3
// (delivery_redelivery_run.json), and leaves the event's Outcome, which
// the first run set, alone. Recorded in 0.2.0 since attempts carry
// priority keys; 0.1.0's keep replaying.
func TestDeliveryRedeliveryGoldenHistories(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Hour} })
	flaky := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	hook := subscribe(t, env, flaky, map[string]any{"url": flaky.URL, "eventTypes": []string{"test.updated"}})
	ev := publish(t, env, "test.updated", map[string]any{"golden": "redelivery"})
	stored := awaitAttempts(t, env, hook.ID, ev.ID, 1)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	redeliver := func() {
		t.Helper()
		if err := workflows.SignalRedeliver(ctx, env.Temporal, stored, env.Config.TaskQueue, workflows.Redelivery{SubscriptionID: hook.ID, RequestID: "golden"}, workflows.PriorityPerson); err != nil {
			t.Fatal(err)
		}
	}
	redeliver()
	var res workflows.DeliveryResult
	if err := env.Temporal.GetWorkflow(ctx, workflows.DeliveryWorkflowID(ev.ID), "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered || res.Subscriptions[0].Attempts != 2 {
		t.Fatalf("result %+v", res)
	}
	register := func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) }
	h := env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	// A redelivery is someone waiting: it goes before bulk first attempts.
	if got := scheduledPriorities(h); !slices.Equal(got, []int32{workflows.PriorityPerson}) {
		t.Fatalf("attempt activities' priority keys %v, want the redelivery's %d", got, workflows.PriorityPerson)
	}
	testenv.RecordGolden(t, h, "delivery_redelivery.json", register)

	redeliver()
	awaitAttempts(t, env, hook.ID, ev.ID, 3)
	if err := env.Temporal.GetWorkflow(ctx, workflows.DeliveryWorkflowID(ev.ID), "").Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Subscriptions) != 1 || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered || res.Subscriptions[0].Attempts != 3 {
		t.Fatalf("redelivery run's result %+v", res)
	}
	h = env.History(t, workflows.DeliveryWorkflowID(ev.ID))
	wantStartedPriority(t, h, workflows.PriorityPerson, env.WorkspaceID.String())
	// The event's Outcome is the first run's: a redelivery's run sets none.
	if got := upsertedOutcomes(t, h); len(got) != 0 {
		t.Fatalf("the redelivery run upserted Outcome %v, want none", got)
	}
	if got := scheduledPriorities(h); !slices.Equal(got, []int32{workflows.PriorityPerson}) {
		t.Fatalf("redelivery run's priority keys %v, want %d", got, workflows.PriorityPerson)
	}
	testenv.RecordGolden(t, h, "delivery_redelivery_run.json", register)
	if got := flaky.count(); got != 3 {
		t.Fatalf("receiver got %d requests, want 3", got)
	}
}

// awaitAttempts waits until the event's delivery to the subscription has
// n records and its workflow was started, and returns the stored event.
func awaitAttempts(t *testing.T, env *testenv.Env, subID, eventID uuid.UUID, n int) models.Event {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		made, err := env.Store.Deliveries().AttemptsMade(ctx, subID, eventID)
		var ev models.Event
		if err == nil {
			ev, err = env.Store.Events().Get(ctx, eventID)
		}
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if made >= n && ev.DispatchedAt != nil {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s: %d attempts recorded, want %d", eventID, made, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
