package webhooks_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Every search attribute finds exactly the workflows it should on the real
// Temporal server (SQLite visibility), the way an operator filters the Web
// UI's list: deliveries and API keys of two workspaces, one event
// delivered to a receiver that always fails (exhausted), the others
// delivered. Attribute values shared with other tests of this binary
// (event types, outcomes) are narrowed to this test's task queue.
func TestSearchAttributesFindTheirWorkflows(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second} })
	ctx := context.Background()
	creds, err := env.Store.Bootstrap(ctx, "Second workspace", "second-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other := *env
	other.WorkspaceID, other.AdminKey = creds.WorkspaceID, creds.Secret
	ws1, ws2 := env, &other

	ok1, dead, ok2 := newReceiver(t, http.StatusOK), newReceiver(t, http.StatusServiceUnavailable), newReceiver(t, http.StatusOK)
	subA := subscribe(t, ws1, ok1, map[string]any{"url": ok1.URL + "/a", "eventTypes": []string{"test.created", "test.updated"}})
	subB := subscribe(t, ws1, dead, map[string]any{"url": dead.URL + "/b", "eventTypes": []string{"test.created"}})
	subC := subscribe(t, ws2, ok2, map[string]any{"url": ok2.URL + "/c", "eventTypes": []string{"test.created"}})
	created1 := publish(t, ws1, "test.created", map[string]any{"n": 1}) // to A and B: B exhausts
	updated1 := publish(t, ws1, "test.updated", map[string]any{"n": 2}) // to A
	created2 := publish(t, ws2, "test.created", map[string]any{"n": 3}) // to C
	key1, key2 := expiringKey(t, ws1), expiringKey(t, ws2)
	for _, ev := range []models.EventAccepted{created1, updated1, created2} {
		awaitDelivery(t, env, ev.ID, time.Minute, nil)
	}

	d := func(ev models.EventAccepted) string { return workflows.DeliveryWorkflowID(ev.ID) }
	k := func(id uuid.UUID) string { return workflows.APIKeyWorkflowID(id) }
	q := ` AND TaskQueue = "` + env.Config.TaskQueue + `"`
	for _, c := range []struct {
		query string
		want  []string
	}{
		{`WorkspaceId = "` + ws1.WorkspaceID.String() + `"`, []string{d(created1), d(updated1), k(key1)}},
		{`WorkspaceId = "` + ws2.WorkspaceID.String() + `"`, []string{d(created2), k(key2)}},
		{`EventType = "test.created"` + q, []string{d(created1), d(created2)}},
		{`EventType = "test.updated"` + q, []string{d(updated1)}},
		{`EventId = "` + created1.ID.String() + `"`, []string{d(created1)}},
		{`SubscriptionIds = "` + subA.ID.String() + `"`, []string{d(created1), d(updated1)}},
		{`SubscriptionIds = "` + subB.ID.String() + `"`, []string{d(created1)}},
		{`SubscriptionIds = "` + subC.ID.String() + `"`, []string{d(created2)}},
		{`ApiKeyId = "` + key1.String() + `"`, []string{k(key1)}},
		{`ApiKeyId = "` + key2.String() + `"`, []string{k(key2)}},
		{`Outcome = "exhausted"` + q, []string{d(created1)}},
		{`Outcome = "delivered"` + q, []string{d(updated1), d(created2)}},
		// The operator's usual questions, combined.
		{`SubscriptionIds = "` + subB.ID.String() + `" AND Outcome = "exhausted"`, []string{d(created1)}},
		{`SubscriptionIds = "` + subA.ID.String() + `" AND Outcome = "delivered"`, []string{d(updated1)}},
		{`WorkspaceId = "` + ws1.WorkspaceID.String() + `" AND WorkflowType = "APIKey"`, []string{k(key1)}},
	} {
		listExactly(t, env, c.query, c.want)
	}

	// Each attempt reads at a glance in the history: the number and the
	// receiver's host (never the path, here /b).
	h := env.History(t, d(created1))
	deadHost := strings.TrimPrefix(dead.URL, "https://")
	summaries := summariesOf(t, h)
	for _, want := range []string{
		"Deliver test.created event to 2 subscriptions", // the workflow's own
		"attempt 1 → subscription " + subB.ID.String(),  // before any attempt named the host
		"wait for attempt 2 → " + deadHost,              // its retry's timer
		"attempt 2 → " + deadHost,
	} {
		if !slices.Contains(summaries, want) {
			t.Errorf("no summary %q in the history; summaries: %q", want, summaries)
		}
	}
	for _, s := range summaries {
		if strings.Contains(s, "/b") || strings.Contains(s, "https://") {
			t.Errorf("summary %q names more of the URL than its host", s)
		}
	}
}

// expiringKey creates a key that expires in an hour (so it has a
// lifecycle workflow) in env's workspace.
func expiringKey(t *testing.T, env *testenv.Env) uuid.UUID {
	t.Helper()
	var k models.APIKey
	env.DoJSON(t, http.MethodPost, wsPath(env, "/api-keys"), env.AdminKey,
		map[string]any{"name": "findable", "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, http.StatusCreated, &k)
	return k.ID
}

// listExactly lists workflows by query until the IDs found are exactly
// want: visibility trails the workflows by a moment, so it polls, and
// fails with what it last found after 20 s.
func listExactly(t *testing.T, env *testenv.Env, query string, want []string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for {
		resp, err := env.Temporal.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatalf("list %s: %v", query, err)
		}
		got = got[:0]
		for _, e := range resp.Executions {
			got = append(got, e.Execution.WorkflowId)
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s\n  found %v\n  want  %v", query, got, want)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// summariesOf decodes every summary in a history: the workflow's, its
// activities', local activities' (markers) and timers'.
func summariesOf(t *testing.T, h *historypb.History) []string {
	t.Helper()
	var out []string
	for _, ev := range h.Events {
		p := ev.GetUserMetadata().GetSummary()
		if p == nil {
			continue
		}
		var s string
		if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
			t.Fatalf("event %d: summary %v: %v", ev.EventId, p, err)
		}
		out = append(out, s)
	}
	return out
}
