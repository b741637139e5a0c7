package webhooks_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/openlayer-ai/workspace-service/internal/testenv"
	"github.com/openlayer-ai/workspace-service/models"
)

// After a run that creates, rotates and uses API keys, creates a webhook,
// delivers to it and provokes errors with every secret, no secret appears
// in the processes' logs, in /metrics of either process, in any Temporal
// history or memo of the run, or in any error body.
func TestNoSecretLeaks(t *testing.T) {
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	var errorBodies []string
	call := func(method, path, key string, body any) []byte {
		t.Helper()
		status, raw := env.Do(t, method, path, key, body)
		if status >= 400 {
			errorBodies = append(errorBodies, string(raw))
		}
		return raw
	}

	// Keys: one expiring (so it has a workflow), rotated with grace (its
	// previous secret stays valid), and the admin's.
	var k, rotated models.APIKey
	env.DoJSON(t, http.MethodPost, wsPath(env, "/api-keys"), env.AdminKey,
		map[string]any{"name": "leak", "expiresAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, http.StatusCreated, &k)
	env.DoJSON(t, http.MethodPost, wsPath(env, "/api-keys/"+k.ID.String()+"/rotate"), k.Secret,
		map[string]any{"gracePeriodSeconds": 600}, http.StatusOK, &rotated)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	secrets := map[string]string{
		"admin key": env.AdminKey, "rotated key's previous secret": k.Secret,
		"rotated key's current secret": rotated.Secret, "webhook signing secret": hook.Secret,
	}

	// Use every secret, well and badly.
	ev := publish(t, env, "test.created", map[string]any{"leak": true})
	rc.wait(t, 2, 30*time.Second) // a 500, then the retry's 200
	for _, s := range secrets {
		call(http.MethodGet, "/projects", s, nil)
		call(http.MethodPost, wsPath(env, "/api-keys"), s, map[string]any{"expiresAt": "not a date", "name": s})
		call(http.MethodPost, wsPath(env, "/api-keys/"+k.ID.String()+"/rotate"), s, map[string]any{"gracePeriodSeconds": -1})
		call(http.MethodGet, "/projects?name="+s+"&page=x", s, nil)
		call(http.MethodPost, wsPath(env, "/webhooks"), s, map[string]any{"url": "http://" + s + ".invalid/", "eventTypes": []string{"nope"}})
		call(http.MethodGet, "/projects", s+"x", nil) // not a key: 401
		req, _ := http.NewRequest(http.MethodGet, env.BaseURL+"/projects", nil)
		req.Header.Set("Authorization", "Bearer "+s)
		req.Header.Set("X-Request-Id", s)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 400 {
				errorBodies = append(errorBodies, string(b))
			}
		}
	}
	awaitDelivery(t, env, ev.ID, 30*time.Second, nil)
	ctx := context.Background()

	places := map[string]string{
		"logs":            env.Logs(),
		"API /metrics":    get(t, strings.TrimSuffix(env.BaseURL, "/v1")+"/metrics"),
		"worker /metrics": get(t, "http://"+env.WorkerAddr+"/metrics"),
		"error bodies":    strings.Join(errorBodies, "\n"),
	}
	// Every workflow of the run's task queue: histories and memos.
	var histories, memos strings.Builder
	workflowsSeen := 0
	resp, err := env.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: `TaskQueue = "` + env.Config.TaskQueue + `"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range resp.Executions {
		workflowsSeen++
		h := env.History(t, w.Execution.WorkflowId)
		b, _ := protojson.Marshal(h)
		histories.Write(b)
		m, _ := protojson.Marshal(w.Memo)
		memos.Write(m)
	}
	if workflowsSeen < 2 {
		t.Fatalf("found %d workflows of the run; want the delivery and the key's at least", workflowsSeen)
	}
	places["workflow histories"] = histories.String()
	places["workflow memos"] = memos.String()

	hits := 0
	for place, text := range places {
		for name, s := range secrets {
			// The bare secret, and the part after its prefix (a base64
			// body could be logged without it).
			for _, needle := range []string{s, s[strings.IndexByte(s, '_')+1:]} {
				if strings.Contains(text, needle) {
					hits++
					t.Errorf("%s leaks the %s", place, name)
				}
			}
		}
	}
	t.Logf("searched %d secrets in logs (%d bytes), both /metrics, %d workflow histories and memos (%d bytes), %d error bodies: %d hits",
		len(secrets), len(places["logs"]), workflowsSeen, histories.Len()+memos.Len(), len(errorBodies), hits)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
