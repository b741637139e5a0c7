package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
	"github.com/openlayer-ai/workspace-service/workflows"
)

func wsPath(env *testenv.Env, rest string) string {
	return "/workspaces/" + env.WorkspaceID.String() + rest
}

func subscribe(t testing.TB, env *testenv.Env, rc *receiver, body map[string]any) models.WebhookCreated {
	t.Helper()
	var c models.WebhookCreated
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks"), env.AdminKey, body, http.StatusCreated, &c)
	if rc != nil {
		rc.trust(t, c.Secret)
	}
	return c
}

func publish(t testing.TB, env *testenv.Env, typ string, data any) models.EventAccepted {
	t.Helper()
	var acc models.EventAccepted
	env.DoJSON(t, http.MethodPost, wsPath(env, "/events"), env.AdminKey, map[string]any{"type": typ, "data": data}, http.StatusAccepted, &acc)
	return acc
}

// awaitDelivery waits for an event's delivery workflow to finish and
// decodes its result into out (may be nil). Publishing only stores the
// event; a worker's dispatcher starts the workflow a moment later, so the
// workflow is looked up once the event is marked dispatched.
func awaitDelivery(t testing.TB, env *testenv.Env, eventID uuid.UUID, within time.Duration, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		ev, err := env.Store.Events().Get(ctx, eventID)
		if err != nil {
			t.Fatal(err)
		}
		if ev.DispatchedAt != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("event %s: its delivery workflow was not started within %v", eventID, within)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := env.Temporal.GetWorkflow(ctx, workflows.DeliveryWorkflowID(eventID), "").Get(ctx, out); err != nil {
		t.Fatalf("delivery workflow of %s: %v", eventID, err)
	}
}

// records polls the deliveries endpoint until it lists n records.
func records(t *testing.T, env *testenv.Env, hook models.WebhookCreated, n int) []json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var page struct {
			Meta  models.PageMeta   `json:"_meta"`
			Items []json.RawMessage `json:"items"`
		}
		env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries"), env.AdminKey, nil, http.StatusOK, &page)
		if len(page.Items) >= n {
			if page.Meta.TotalItems != len(page.Items) {
				t.Fatalf("_meta %+v with %d items", page.Meta, len(page.Items))
			}
			return page.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d delivery records, want %d", len(page.Items), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The whole path over real sockets: an admin subscribes a real HTTPS
// receiver and publishes an event; the receiver fails once, then accepts;
// it verifies every request with the Standard Webhooks library and sees
// the same webhook-id and body on both; the delivery records read back
// through the API say exactly what happened.
func TestWebhookEndToEnd(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second, time.Second} })
	rc := newReceiver(t, http.StatusInternalServerError, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/hooks/openlayer", "eventTypes": []string{"tests.result.updated"}})

	// Neither of these may receive anything.
	disabledRc := newReceiver(t, http.StatusOK)
	subscribe(t, env, disabledRc, map[string]any{"url": disabledRc.URL, "eventTypes": []string{"tests.result.updated"}, "enabled": false})
	otherTypeRc := newReceiver(t, http.StatusOK)
	subscribe(t, env, otherTypeRc, map[string]any{"url": otherTypeRc.URL, "eventTypes": []string{"test.deleted"}})

	data := map[string]any{"testId": "9f1c", "status": "failing", "note": "<&>"}
	acc := publish(t, env, "tests.result.updated", data)

	got := rc.wait(t, 2, 20*time.Second)
	for i, d := range got {
		if d.verifyErr != nil {
			t.Errorf("request %d: the reference library rejects the signature: %v", i+1, d.verifyErr)
		}
		if d.id != acc.ID.String() {
			t.Errorf("request %d: webhook-id %q, want the event id %s", i+1, d.id, acc.ID)
		}
		if string(d.body) != string(got[0].body) {
			t.Errorf("request %d: body %s differs from the first %s", i+1, d.body, got[0].body)
		}
	}
	if gap := got[1].at.Sub(got[0].at); gap < 800*time.Millisecond || gap > 5*time.Second {
		t.Errorf("retry came %v after the first attempt; the schedule says about 1s", gap)
	}
	var body struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	dec := json.NewDecoder(strings.NewReader(string(got[0].body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body %s: %v", got[0].body, err)
	}
	if body.Type != "tests.result.updated" || body.Data["testId"] != "9f1c" || body.Data["note"] != "<&>" || time.Since(body.Timestamp) > time.Minute {
		t.Fatalf("body %s", got[0].body)
	}

	// The records, newest first, with exactly the spec's members.
	raw := records(t, env, hook, 2)
	want := []string{"attemptNumber", "dateCreated", "errorMessage", "eventId", "id", "responseBody", "responseTimeMs", "statusCode", "success"}
	var recs []models.WebhookDelivery
	for _, r := range raw {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(r, &m)
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		if strings.Join(names, ",") != strings.Join(want, ",") {
			t.Fatalf("record members %v, want %v", names, want)
		}
		var d models.WebhookDelivery
		_ = json.Unmarshal(r, &d)
		recs = append(recs, d)
	}
	second, first := recs[0], recs[1]
	if first.AttemptNumber != 1 || first.Success || first.StatusCode == nil || *first.StatusCode != got[0].answered ||
		first.ResponseBody != "answer Internal Server Error" || first.ErrorMessage == nil || first.EventID != acc.ID {
		t.Errorf("attempt 1 record %+v", first)
	}
	if second.AttemptNumber != 2 || !second.Success || second.StatusCode == nil || *second.StatusCode != got[1].answered ||
		second.ResponseBody != "answer OK" || second.ErrorMessage != nil || second.EventID != acc.ID {
		t.Errorf("attempt 2 record %+v", second)
	}
	if !second.DateCreated.After(first.DateCreated) || first.ResponseTimeMs < 0 || first.ResponseTimeMs > 5000 {
		t.Errorf("record times: %v then %v, %dms", first.DateCreated, second.DateCreated, first.ResponseTimeMs)
	}

	// Nothing else arrives: not a third attempt, not the disabled or the
	// other-type subscription.
	time.Sleep(1500 * time.Millisecond)
	if rc.count() != 2 || disabledRc.count() != 0 || otherTypeRc.count() != 0 {
		t.Fatalf("requests: %d, disabled %d, other type %d; want 2, 0, 0", rc.count(), disabledRc.count(), otherTypeRc.count())
	}
	checkWorkerMetrics(t, env)
}

// checkWorkerMetrics reads the worker's /metrics after one failed and one
// successful attempt.
func checkWorkerMetrics(t *testing.T, env *testenv.Env) {
	t.Helper()
	resp, err := http.Get("http://" + env.WorkerAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	for _, line := range []string{
		`webhook_delivery_attempts_total{outcome="http_error"} 1`,
		`webhook_delivery_attempts_total{outcome="success"} 1`,
		`webhook_delivery_attempt_duration_seconds_count 2`,
		`webhook_delivery_latency_seconds_count 1`,
		`webhook_delivery_retries_scheduled_total 1`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("worker metrics lack %q", line)
		}
	}
	// Events are accepted, and counted, by the API.
	resp, err = http.Get(strings.TrimSuffix(env.BaseURL, "/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ = io.ReadAll(resp.Body)
	if line := `webhook_events_accepted_total{type="tests.result.updated"} 1`; !strings.Contains(string(b), line+"\n") {
		t.Errorf("API metrics lack %q", line)
	}
}

// stored reads an event back, recipients included.
func stored(t *testing.T, env *testenv.Env, id uuid.UUID) models.Event {
	t.Helper()
	ev, err := env.Store.Events().Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// An event stored while Temporal could not start its workflow (the API
// crashed, or Temporal was down) is picked up by the worker's sweeper.
func TestOutboxSweeperDeliversStrandedEvents(t *testing.T) {
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	ctx := context.Background()
	ev, err := env.Store.Events().Create(ctx, models.NewEvent{WorkspaceID: env.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{"stranded":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Old enough for the sweeper to take over from the API.
	if _, err := env.DB.ExecContext(ctx, `UPDATE events SET date_created = now() - interval '1 minute' WHERE id = ?`, ev.ID); err != nil {
		t.Fatal(err)
	}
	got := rc.wait(t, 1, 15*time.Second)
	if got[0].id != ev.ID.String() || got[0].verifyErr != nil {
		t.Fatalf("got %q (verify %v), want event %s", got[0].id, got[0].verifyErr, ev.ID)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		stored, err := env.Store.Events().Get(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.DispatchedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the swept event is not marked dispatched")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A repeated start (as when the API and the sweeper race) reuses the
	// finished workflow, and later sweeps skip the dispatched event: nothing
	// more is delivered.
	d := outbox.NewEvents(outbox.Deps{Temporal: env.Temporal, Store: env.Store, TaskQueue: env.Config.TaskQueue}, env.Config.WebhookRetrySchedule)
	if err := d.Send(ctx, stored(t, env, ev.ID)); err != nil {
		t.Fatalf("repeated start: %v", err)
	}
	time.Sleep(2500 * time.Millisecond)
	if rc.count() != 1 {
		t.Fatalf("receiver got %d requests, want 1", rc.count())
	}
}
