package metrics_test

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/devprom"
	"github.com/openlayer-ai/workspace-service/internal/procstack"
)

// sendTraffic does, through the API process, what makes every checked
// series appear: keys created (one expiring in seconds), rotated and
// revoked; a project; webhooks to an endpoint that answers 200, one that
// answers 500 and one whose signing secret no key opens; events to each.
// One request presents a key that does not exist. It also leaves one event in the outbox with a claim held for an hour
// and stamped an hour ago, as a dispatcher that died mid-batch leaves it,
// which the backlog gauges must measure.
func sendTraffic(t *testing.T, ctx context.Context, st *procstack.Stack, receiverURL string) {
	t.Helper()
	ws, err := st.Bootstrap(ctx, "Metrics")
	if err != nil {
		t.Fatal(err)
	}
	c := client{t: t, base: "http://" + st.APIAddr, key: ws.Secret}
	// A rejected credential.
	client{t: t, base: c.base, key: "sk-not-a-key"}.do(http.MethodGet, "/v1/projects", nil, http.StatusUnauthorized, nil)
	keys := c.path("/v1/workspaces/%s/api-keys", ws.WorkspaceID)

	var expiring, plain struct {
		ID string `json:"id"`
	}
	c.do(http.MethodPost, keys, map[string]any{"name": "expiring",
		"expiresAt": time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)}, http.StatusCreated, &expiring)
	c.do(http.MethodPost, keys, map[string]any{"name": "plain"}, http.StatusCreated, &plain)
	c.do(http.MethodPost, keys+"/"+plain.ID+"/rotate", nil, http.StatusOK, nil)
	c.do(http.MethodDelete, keys+"/"+plain.ID, nil, http.StatusNoContent, nil)
	c.do(http.MethodPost, "/v1/projects", map[string]any{"name": "metrics", "taskType": "llm-base"}, http.StatusCreated, nil)

	hooks := c.path("/v1/workspaces/%s/webhooks", ws.WorkspaceID)
	var broken struct {
		ID string `json:"id"`
	}
	c.do(http.MethodPost, hooks, map[string]any{"url": receiverURL + "/ok", "eventTypes": []string{"test.created"}}, http.StatusCreated, nil)
	c.do(http.MethodPost, hooks, map[string]any{"url": receiverURL + "/fail", "eventTypes": []string{"test.updated"}}, http.StatusCreated, nil)
	c.do(http.MethodPost, hooks, map[string]any{"url": receiverURL + "/ok", "eventTypes": []string{"test.deleted"}}, http.StatusCreated, &broken)
	// A sealed secret no key of the worker's ring opens (a ring rotated
	// badly): its attempts fail as activities and are retried.
	if _, err := st.DB.NewRaw(`UPDATE webhook_subscriptions SET secret_ciphertext = '\x00010203' WHERE id = ?`, broken.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	events := c.path("/v1/workspaces/%s/events", ws.WorkspaceID)
	for _, typ := range []string{"test.created", "test.updated", "test.deleted"} {
		c.do(http.MethodPost, events, map[string]any{"type": typ, "data": map[string]any{"n": 1}}, http.StatusAccepted, nil)
	}

	_, err = st.DB.NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients, dispatch_claimed_until)
		VALUES (gen_random_uuid(), ?, 'test.created', '{}'::jsonb, now() - interval '1 hour', ARRAY[gen_random_uuid()], now() + interval '1 hour')`,
		ws.WorkspaceID).Exec(ctx)
	if err != nil {
		t.Fatal(err)
	}
}

// requirePrometheus skips the test, loudly, when no prometheus binary is
// on PATH, except in CI (CI=true), where `make test` has installed
// Debian's package and a missing binary is a failure.
func requirePrometheus(t *testing.T) {
	t.Helper()
	if _, err := devprom.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: %v", err)
		}
		t.Skipf("SKIPPED, NOT PASSED: %v. `make test` installs it.", err)
	}
}
