package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Fan-out at the cap, every endpoint failing the whole schedule: each
// subscription gets exactly one record per attempt, 1..4, and the event's
// workflow history stays far inside Temporal's limits (51,200 events,
// 50 MB). The figures printed here are docs/operations.md's headroom.
func TestFanOutAtTheCapWithEveryEndpointFailing(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) {
		c.WebhookRetrySchedule = []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	})
	max := env.Config.WebhookMaxSubscriptions
	var hits atomic.Int64
	dead := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(dead.Close)
	for i := range max {
		subscribe(t, env, nil, map[string]any{"url": dead.URL + "/" + uuid.NewString() + "?n=" + strconv.Itoa(i), "eventTypes": []string{"test.created"}})
	}
	status, body := env.Do(t, http.MethodPost, wsPath(env, "/webhooks"), env.AdminKey,
		map[string]any{"url": dead.URL, "eventTypes": []string{"test.created"}})
	if status != http.StatusConflict {
		t.Fatalf("subscription %d: %d %s, want 409", max+1, status, body)
	}

	ev := publish(t, env, "test.created", map[string]any{"fanout": true})
	awaitDelivery(t, env, ev.ID, 5*time.Minute, nil)
	ctx := context.Background()
	id := workflows.DeliveryWorkflowID(ev.ID)
	attempts := len(env.Config.WebhookRetrySchedule) + 1
	var bad []string
	err := env.DB.NewRaw(`SELECT s.id::text FROM webhook_subscriptions s
		LEFT JOIN webhook_deliveries d ON d.subscription_id = s.id AND d.event_id = ?
		GROUP BY s.id
		HAVING count(d.id) <> ? OR count(DISTINCT d.attempt_number) <> ? OR min(d.attempt_number) <> 1 OR max(d.attempt_number) <> ? OR bool_or(d.success)`,
		ev.ID, attempts, attempts, attempts).Scan(ctx, &bad)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 {
		t.Fatalf("%d subscriptions lack exactly attempts 1..%d, all failed: %v", len(bad), attempts, bad)
	}
	if got := hits.Load(); got != int64(max*attempts) {
		t.Errorf("receiver got %d requests, want %d", got, max*attempts)
	}

	events, size := historyOf(ctx, t, env.Temporal, id)
	t.Logf("fan-out %d × %d attempts, all failing: %d history events, %d bytes (limits 51,200 events, 50 MB)", max, attempts, events, size)
	// About 11 events per attempt at worst (see config.FanOutBudget).
	if limit := 11*max*attempts + 100; events > limit || size > 2<<20 {
		t.Errorf("history of %d events and %d bytes, want at most %d events and 2 MiB", events, size, limit)
	}
}

// historyOf counts a workflow's history events and their encoded size.
func historyOf(ctx context.Context, t *testing.T, c client.Client, id string) (events, size int) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		size += proto.Size(e)
	}
	return events, size
}

// A worker stopped while an attempt is in flight (SIGTERM in production)
// lets it finish and record before exiting: the receiver is called once
// and the record says success, so no other worker sends it again.
func TestWorkerShutdownLetsInFlightAttemptsFinish(t *testing.T) {
	env := testenv.Start(t)
	arrived := make(chan struct{}, 1)
	slow := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		time.Sleep(2 * time.Second)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(slow.Close)
	hook := subscribe(t, env, nil, map[string]any{"url": slow.URL, "eventTypes": []string{"test.created"}})
	ev := publish(t, env, "test.created", map[string]any{})
	select {
	case <-arrived:
	case <-time.After(15 * time.Second):
		t.Fatal("the attempt never arrived")
	}
	env.StopWorker() // while the receiver holds the request
	var success []bool
	err := env.DB.NewRaw(`SELECT success FROM webhook_deliveries WHERE subscription_id = ? AND event_id = ?`,
		hook.ID, ev.ID).Scan(context.Background(), &success)
	if err != nil || len(success) != 1 || !success[0] {
		t.Fatalf("records after shutdown: %v, %v; want one successful attempt", success, err)
	}
	// A fresh worker takes over the queue: nothing is left for it to send
	// again (with the attempt cancelled, it would retry it).
	env.StartWorker(t)
	time.Sleep(3 * time.Second)
	if len(arrived) != 0 {
		t.Fatal("the receiver was called again")
	}
}
