package workflows_test

import (
	"testing"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Every workflow starts with the workspace as its fairness key, and a
// priority key by who waits on it (docs/operations.md#priorities).
func TestStartOptionsCarryPriorityAndWorkspace(t *testing.T) {
	ws, id := uuid.New(), uuid.New()
	event := func(typ models.EventType) models.Event {
		return models.Event{ID: uuid.New(), WorkspaceID: ws, Type: typ, Recipients: []uuid.UUID{id}}
	}
	for _, c := range []struct {
		name string
		opts client.StartWorkflowOptions
		want int
	}{
		{"bulk event", workflows.DeliveryStartOptions(event(models.EventTestCreated), "q", 0), workflows.PriorityFirstAttempt},
		{"test event", workflows.DeliveryStartOptions(event(models.EventWebhookTest), "q", 0), workflows.PriorityPerson},
		{"API key", workflows.APIKeyStartOptions(ws, id, "q"), workflows.PriorityPerson},
		{"signing secret", workflows.WebhookSecretStartOptions(ws, id, "q"), workflows.PriorityPerson},
		{"recovery", workflows.RecoverStartOptions(ws, id, "q"), workflows.PriorityRecovery},
	} {
		if p := c.opts.Priority; p.PriorityKey != c.want || p.FairnessKey != ws.String() {
			t.Errorf("%s: priority %d, fairness key %q; want %d and %s", c.name, p.PriorityKey, p.FairnessKey, c.want, ws)
		}
	}
}
