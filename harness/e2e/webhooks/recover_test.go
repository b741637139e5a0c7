package webhooks_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// recoverSchedule is three attempts a second apart: the whole schedule
// is over in about two seconds, and a receiver "down for longer" is one
// that fails all three.
var recoverSchedule = []time.Duration{time.Second, time.Second}

// eventually polls cond every 100 ms until it holds, failing after within.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deliveryStatus counts a subscription's deliveries in status.
func deliveryStatus(t *testing.T, env *testenv.Env, sub uuid.UUID, status models.DeliveryStatus) int {
	t.Helper()
	var n int
	err := env.DB.NewRaw(`SELECT count(*) FROM webhook_delivery_states WHERE subscription_id = ? AND status = ?`,
		sub, string(status)).Scan(context.Background(), &n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// attemptRecords are an event's delivery records to a subscription: each
// attempt number's successes, in attempt order.
type attemptRecord struct {
	Number  int  `bun:"attempt_number"`
	Success bool `bun:"success"`
}

func attemptRecords(t *testing.T, env *testenv.Env, sub, event uuid.UUID) []attemptRecord {
	t.Helper()
	var recs []attemptRecord
	err := env.DB.NewRaw(`SELECT attempt_number, success FROM webhook_deliveries
		WHERE subscription_id = ? AND event_id = ? ORDER BY attempt_number`, sub, event).Scan(context.Background(), &recs)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// requireAttempts: the records are attempts 1..n, one each, only the last
// a success.
func requireAttempts(t *testing.T, recs []attemptRecord, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d records %+v, want %d", len(recs), recs, n)
	}
	for i, r := range recs {
		if r.Number != i+1 || r.Success != (i == n-1) {
			t.Fatalf("records %+v, want attempts 1..%d with only the last a success", recs, n)
		}
	}
}

// The "done when": a receiver down for longer than the whole
// schedule misses N events (every one ends failed after its 3 attempts);
// once it is back, POST .../recover gets each of them delivered by a 4th
// attempt with the same webhook-id, signed, and one record per attempt
// number without gaps; GET .../recover ends completed with found == N. A
// second subscription's failed delivery is left alone by that recovery
// and gets its 4th attempt through POST .../redeliver, which a disabled
// subscription is refused.
func TestRecoverAfterAnOutageLongerThanTheSchedule(t *testing.T) {
	const n = 5
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = recoverSchedule })
	attempts := len(recoverSchedule) + 1
	down := func(k int) []int {
		s := make([]int, k, k+1)
		for i := range s {
			s[i] = http.StatusServiceUnavailable
		}
		return append(s, http.StatusOK)
	}
	rc := newReceiver(t, down(n*attempts)...)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL, "eventTypes": []string{"test.created"}})
	otherRc := newReceiver(t, down(attempts)...)
	other := subscribe(t, env, otherRc, map[string]any{"url": otherRc.URL, "eventTypes": []string{"test.updated"}})

	since := time.Now().Add(-time.Minute).UTC()
	var ids []uuid.UUID
	for i := range n {
		ids = append(ids, publish(t, env, "test.created", map[string]any{"n": i}).ID)
	}
	otherEvent := publish(t, env, "test.updated", map[string]any{"other": true}).ID
	eventually(t, time.Minute, "every delivery failed", func() bool {
		return deliveryStatus(t, env, hook.ID, models.DeliveryFailed) == n && deliveryStatus(t, env, other.ID, models.DeliveryFailed) == 1
	})
	if got := rc.count(); got != n*attempts {
		t.Fatalf("the receiver got %d requests during the outage, want %d", got, n*attempts)
	}

	// Back up: the receiver's next answers are 200.
	path := wsPath(env, "/webhooks/"+hook.ID.String()+"/recover")
	var started models.WebhookRecovery
	env.DoJSON(t, http.MethodPost, path, env.AdminKey, map[string]any{"since": since.Format(time.RFC3339)}, http.StatusAccepted, &started)
	if started.ID == "" || started.State != models.RecoveryRunning {
		t.Fatalf("recovery %+v", started)
	}

	var done models.WebhookRecovery
	eventually(t, time.Minute, "the recovery completes", func() bool {
		env.DoJSON(t, http.MethodGet, path, env.AdminKey, nil, http.StatusOK, &done)
		return done.Done
	})
	if done.ID != started.ID || done.State != models.RecoveryCompleted || done.Found != n || done.Redelivered != n || done.FinishedAt == nil {
		t.Fatalf("recovery %+v, want completed with %d found and redelivered", done, n)
	}
	// A recovery's runs are bulk: they start below a person's redelivery.
	run, err := env.Temporal.DescribeWorkflowExecution(t.Context(), workflows.DeliveryWorkflowID(ids[0]), "")
	if err != nil {
		t.Fatal(err)
	}
	if key := run.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey(); key != workflows.PriorityRecovery {
		t.Errorf("a recovery's redelivery run has priority %d, want %d", key, workflows.PriorityRecovery)
	}
	got := rc.wait(t, n*attempts+n, time.Minute)
	eventually(t, 30*time.Second, "every delivery succeeded", func() bool {
		return deliveryStatus(t, env, hook.ID, models.DeliverySucceeded) == n
	})
	for _, id := range ids {
		requireAttempts(t, attemptRecords(t, env, hook.ID, id), attempts+1)
	}
	// Every request of an event carried its id, and every one verified.
	perID := map[string]int{}
	for _, d := range got {
		if d.verifyErr != nil {
			t.Fatalf("request %s did not verify: %v", d.id, d.verifyErr)
		}
		perID[d.id]++
	}
	for _, id := range ids {
		if perID[id.String()] != attempts+1 {
			t.Fatalf("webhook-id %s came %d times, want %d: %v", id, perID[id.String()], attempts+1, perID)
		}
	}
	if len(perID) != n {
		t.Fatalf("webhook-ids %v, want the %d events'", perID, n)
	}
	// The other subscription's failed delivery is not this recovery's.
	if deliveryStatus(t, env, other.ID, models.DeliveryFailed) != 1 || otherRc.count() != attempts {
		t.Fatal("the recovery touched another subscription's delivery")
	}

	// A second recovery finds nothing left to redeliver.
	env.DoJSON(t, http.MethodPost, path, env.AdminKey, map[string]any{"since": since.Format(time.RFC3339)}, http.StatusAccepted, &started)
	eventually(t, time.Minute, "the second recovery completes", func() bool {
		env.DoJSON(t, http.MethodGet, path, env.AdminKey, nil, http.StatusOK, &done)
		return done.Done && done.ID == started.ID
	})
	if done.Found != 0 {
		t.Fatalf("second recovery %+v, want nothing found", done)
	}

	// Redelivery of the other subscription's event: attempt 4, same id.
	redeliver := wsPath(env, "/webhooks/"+other.ID.String()+"/deliveries/"+otherEvent.String()+"/redeliver")
	env.DoJSON(t, http.MethodPut, wsPath(env, "/webhooks/"+other.ID.String()), env.AdminKey, map[string]any{"enabled": false}, http.StatusOK, nil)
	if code, body := env.Do(t, http.MethodPost, redeliver, env.AdminKey, nil); code != http.StatusConflict {
		t.Fatalf("redeliver to a disabled subscription: %d %s", code, body)
	}
	env.DoJSON(t, http.MethodPut, wsPath(env, "/webhooks/"+other.ID.String()), env.AdminKey, map[string]any{"enabled": true}, http.StatusOK, nil)
	var acc models.RedeliveryAccepted
	env.DoJSON(t, http.MethodPost, redeliver, env.AdminKey, nil, http.StatusAccepted, &acc)
	last := otherRc.wait(t, attempts+1, 30*time.Second)
	if d := last[attempts]; d.id != otherEvent.String() || d.verifyErr != nil || d.answered != http.StatusOK {
		t.Fatalf("redelivered request %+v", d)
	}
	eventually(t, 30*time.Second, "the redelivery is recorded", func() bool {
		return len(attemptRecords(t, env, other.ID, otherEvent)) == attempts+1
	})
	requireAttempts(t, attemptRecords(t, env, other.ID, otherEvent), attempts+1)

	// Each recovery shows in Temporal with its summary.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := env.Temporal.DescribeWorkflowExecution(ctx, workflows.RecoverWorkflowID(hook.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.GetWorkflowExecutionInfo().GetFirstRunId() != started.ID {
		t.Fatalf("latest recovery run %s, want %s", desc.GetWorkflowExecutionInfo().GetFirstRunId(), started.ID)
	}
	summaries := summariesOf(t, env.History(t, workflows.RecoverWorkflowID(hook.ID)))
	if !slices.Contains(summaries, "Recover failed deliveries of webhook subscription "+hook.ID.String()+" (workspace "+env.WorkspaceID.String()+")") {
		t.Fatalf("recovery history has no summaries: %v", summaries)
	}
}
