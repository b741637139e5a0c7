package metrics_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// sendTraffic does, through the API process, what makes every checked
// series appear: keys created (one expiring in seconds), rotated and
// revoked; a project; webhooks to an endpoint that answers 200, one that
// answers 500 and one whose signing secret no key opens; events to each,
// and a redelivery of the first.
// One request presents a key that does not exist. It also leaves one event in the outbox with a claim held for an hour
// and stamped an hour ago, as a dispatcher that died mid-batch leaves it,
// which the backlog gauges must measure.
func sendTraffic(t *testing.T, ctx context.Context, st *procstack.Stack, receiverURL string) {
	t.Helper()
	ws, err := st.Bootstrap(ctx, "Metrics")
	if err != nil {
		t.Fatal(err)
	}
	c := apiclient.New("api", st.APIAddr, ws.Secret, ws.WorkspaceID)
	// A rejected credential.
	call(t, apiclient.New("api", st.APIAddr, "sk-not-a-key", ""), http.MethodGet, "/projects", nil, http.StatusUnauthorized, nil)
	keys := c.WSPath("/api-keys")

	var expiring, plain struct {
		ID string `json:"id"`
	}
	// Five seconds ahead, to the nanosecond: in the future however slow
	// the request, and soon enough for the worker to expire it while the
	// checks wait.
	call(t, c, http.MethodPost, keys, map[string]any{"name": "expiring",
		"expiresAt": time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)}, http.StatusCreated, &expiring)
	call(t, c, http.MethodPost, keys, map[string]any{"name": "plain"}, http.StatusCreated, &plain)
	call(t, c, http.MethodPost, keys+"/"+plain.ID+"/rotate", nil, http.StatusOK, nil)
	call(t, c, http.MethodDelete, keys+"/"+plain.ID, nil, http.StatusNoContent, nil)
	call(t, c, http.MethodPost, "/projects", map[string]any{"name": "metrics", "taskType": "llm-base"}, http.StatusCreated, nil)

	hooks := c.WSPath("/webhooks")
	var broken, ok struct {
		ID string `json:"id"`
	}
	call(t, c, http.MethodPost, hooks, map[string]any{"url": receiverURL + "/ok", "eventTypes": []string{"test.created"}}, http.StatusCreated, &ok)
	call(t, c, http.MethodPost, hooks, map[string]any{"url": receiverURL + "/fail", "eventTypes": []string{"test.updated"}}, http.StatusCreated, nil)
	call(t, c, http.MethodPost, hooks, map[string]any{"url": receiverURL + "/ok", "eventTypes": []string{"test.deleted"}}, http.StatusCreated, &broken)
	// A sealed secret no key of the worker's ring opens (a ring rotated
	// badly): its attempts fail as activities and are retried.
	if _, err := st.DB.NewRaw(`UPDATE webhook_subscriptions SET secret_ciphertext = '\x00010203' WHERE id = ?`, broken.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	events := c.WSPath("/events")
	var created struct {
		ID string `json:"id"`
	}
	for _, typ := range []string{"test.created", "test.updated", "test.deleted"} {
		call(t, c, http.MethodPost, events, map[string]any{"type": typ, "data": map[string]any{"n": 1}}, http.StatusAccepted, &created)
		if typ == "test.created" {
			redeliver(t, ctx, c, hooks+"/"+ok.ID+"/deliveries/"+created.ID+"/redeliver")
		}
	}

	_, err = st.DB.NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients, dispatch_claimed_until)
		VALUES (gen_random_uuid(), ?, 'test.created', '{}'::jsonb, now() - interval '1 hour', ARRAY[gen_random_uuid()], now() + interval '1 hour')`,
		ws.WorkspaceID).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
}

// redeliver asks for a redelivery (the one kind of request the API makes of
// Temporal) once the event is dispatched: until then it answers 409.
func redeliver(t *testing.T, ctx context.Context, c *apiclient.Client, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := c.Send(ctx, http.MethodPost, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status == http.StatusAccepted {
			return
		}
		if resp.Status != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("POST %s: %d %s", path, resp.Status, resp.Body)
		}
	}
}
