package webhooks_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
)

// After a run that creates, rotates and uses API keys, creates a webhook
// (whose URL carries a token in its query string), delivers to it and
// provokes errors with every secret, no secret appears in the processes'
// logs, in /metrics of either process, in any Temporal history, memo,
// search attribute or summary of the run, or in any error body. Temporal's
// payloads (inputs, results, memos, attributes, summaries) are searched
// decoded: protojson shows their bytes in base64, where no needle matches.
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
	queryToken := "qtok_" + uuid.NewString()
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/hook?token=" + queryToken, "eventTypes": []string{"test.created"}})
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
	// Searched for like the secrets, but never sent as one: the requests
	// above would put it where the test, not the service, wrote it.
	secrets["webhook URL's query string"] = queryToken

	places := map[string]string{
		"logs":            env.Logs(),
		"API /metrics":    get(t, strings.TrimSuffix(env.BaseURL, "/v1")+"/metrics"),
		"worker /metrics": get(t, "http://"+env.WorkerAddr+"/metrics"),
		"error bodies":    strings.Join(errorBodies, "\n"),
	}
	// Every workflow of the run's task queue: histories, memos, search
	// attributes and summaries.
	var histories, memos, attributes, summaries strings.Builder
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
		histories.WriteString(payloadText(h))
		memos.WriteString(payloadText(w.Memo))
		attributes.WriteString(payloadText(w.SearchAttributes))
		for _, s := range summariesOf(t, h) {
			summaries.WriteString(s + "\n")
		}
	}
	if workflowsSeen < 2 {
		t.Fatalf("found %d workflows of the run; want the delivery and the key's at least", workflowsSeen)
	}
	// What is searched must be there, or the search proves nothing.
	for what, text := range map[string]string{
		"the key's memo": memos.String(), "the delivery's WorkspaceId": attributes.String(), "the retry's summary": summaries.String(),
	} {
		want := map[string]string{
			"the key's memo": k.ID.String(), "the delivery's WorkspaceId": env.WorkspaceID.String(), "the retry's summary": "attempt 2 → ",
		}[what]
		if !strings.Contains(text, want) {
			t.Fatalf("%s (%q) not found among the decoded payloads: the search below would prove nothing", what, want)
		}
	}
	places["workflow histories"] = histories.String()
	places["workflow memos"] = memos.String()
	places["workflow search attributes"] = attributes.String()
	places["activity, timer and workflow summaries"] = summaries.String()

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
	t.Logf("searched %d secrets in logs (%d bytes), both /metrics, %d workflow histories, memos, search attributes and summaries (%d bytes), %d error bodies: %d hits",
		len(secrets), len(places["logs"]), workflowsSeen, histories.Len()+memos.Len()+attributes.Len()+summaries.Len(), len(errorBodies), hits)
}

// payloadText is the data of every Temporal payload in m, decoded, one a
// line: inputs, results, memos, search attributes, summaries, failures'
// details.
func payloadText(m proto.Message) string {
	var b strings.Builder
	var walk func(protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if p, ok := m.Interface().(*commonpb.Payload); ok {
			b.Write(p.GetData())
			b.WriteByte('\n')
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.IsMap() && fd.MapValue().Message() != nil:
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool { walk(mv.Message()); return true })
			case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
				walk(v.Message())
			}
			return true
		})
	}
	walk(m.ProtoReflect())
	return b.String()
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
