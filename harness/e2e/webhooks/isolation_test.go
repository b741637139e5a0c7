package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/temporalcost"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A workspace whose receivers are slow holds only its share of the
// worker's workflow-task slots: with more of its first attempts in flight
// than the worker has slots, another workspace's events arrive before any
// of the slow attempts ends. Before the share, each slow local attempt held
// its workflow task's slot, and the other workspace's first task waited for
// one to end.
func TestSlowReceiversHoldOnlyTheirWorkspacesShare(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 15 s")
	}
	// Alone on the machine: its premise is more of A's 160 attempts in
	// flight than the worker has slots within one attempt's 9 s, which the
	// other packages' tests running beside it under go test ./... can slow
	// below the slots (seen in CI: 56 in flight). make test runs it
	// afterwards with E2E_SERIAL=1.
	if os.Getenv("E2E_SERIAL") == "" {
		t.Skip("needs the machine to itself: make test runs it alone afterwards (E2E_SERIAL=1)")
	}
	const slow = 9 * time.Second // under the service's 10 s response timeout
	// 4 subscriptions × 40 in flight: 160 slow first attempts, one per
	// event (and so per workflow task), past the worker's 64 slots.
	env := testenv.Start(t, func(c *config.Config) { c.WebhookMaxInFlight = 40 })
	slowRC := &receiver{statuses: []int{http.StatusOK}, notify: make(chan struct{}, 1)}
	stop := make(chan struct{})
	var inFlight atomic.Int64
	var firstAnswer atomic.Int64 // unix nanoseconds
	slowRC.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Add(1)
		select {
		case <-time.After(slow):
		case <-stop:
		}
		firstAnswer.CompareAndSwap(0, time.Now().UnixNano())
		slowRC.serve(w, r)
	}))
	t.Cleanup(func() {
		close(stop)
		slowRC.Close()
	})
	types := []models.EventType{models.EventTestCreated, models.EventTestUpdated, models.EventTestDeleted, models.EventTestsResultUpdated}
	for _, typ := range types {
		subscribe(t, env, slowRC, map[string]any{"url": slowRC.URL, "eventTypes": []string{string(typ)}})
	}

	ctx := context.Background()
	b, err := env.Store.Bootstrap(ctx, "B", "b-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	fastRC := newReceiver(t, http.StatusOK)
	var hook models.WebhookCreated
	env.DoJSON(t, http.MethodPost, "/workspaces/"+b.WorkspaceID.String()+"/webhooks", b.Secret,
		map[string]any{"url": fastRC.URL, "eventTypes": []string{string(models.EventTestCreated)}}, http.StatusCreated, &hook)
	fastRC.trust(t, hook.Secret)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var aEvents []uuid.UUID
	for i := range 16 {
		typ := types[i%len(types)]
		wg.Go(func() {
			for range 10 {
				acc := publish(t, env, string(typ), map[string]any{"slow": true})
				mu.Lock()
				aEvents = append(aEvents, acc.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// More of A's attempts in flight than the worker has workflow-task
	// slots: without the share, local attempts stop at the slots' number.
	for inFlight.Load() < 70 {
		if firstAnswer.Load() != 0 {
			t.Fatalf("only %d of A's attempts were in flight when the first ended: they hold every workflow-task slot", inFlight.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}

	const n = 5
	sent := map[string]time.Time{}
	for i := range n {
		var acc models.EventAccepted
		sent0 := time.Now()
		env.DoJSON(t, http.MethodPost, "/workspaces/"+b.WorkspaceID.String()+"/events", b.Secret,
			map[string]any{"type": string(models.EventTestCreated), "data": map[string]any{"i": i}}, http.StatusAccepted, &acc)
		sent[acc.ID.String()] = sent0
	}
	got := fastRC.wait(t, n, 30*time.Second)
	first := time.Unix(0, firstAnswer.Load())
	var lat []time.Duration
	late := 0
	for _, d := range got {
		if d.verifyErr != nil {
			t.Errorf("B's delivery does not verify: %v", d.verifyErr)
		}
		lat = append(lat, d.at.Sub(sent[d.id]).Round(time.Millisecond))
		if firstAnswer.Load() != 0 && d.at.After(first) {
			late++
		}
	}
	t.Logf("B's publish→receipt while %d of A's attempts waited %v on their receivers: %v", inFlight.Load(), slow, lat)
	if late > 0 {
		t.Fatalf("%d of B's %d events arrived only after one of A's slow attempts ended", late, n)
	}
	recordCrowdedHistory(t, env, aEvents)
}

// recordCrowdedHistory finds a delivery of A's whose first attempt its
// workspace's share sent from the workflow task to a regular activity, and
// replays (RECORD_HISTORIES=1: records) its history as the golden
// 0.2.0/delivery_crowded.json.
func recordCrowdedHistory(t *testing.T, env *testenv.Env, ids []uuid.UUID) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			h := env.History(t, workflows.DeliveryWorkflowID(id))
			c := temporalcost.Of(h.GetEvents())
			if !c.Closed || c.ActivityTasks == 0 || !crowdedLocally(h) {
				continue
			}
			var res workflows.DeliveryResult
			awaitDelivery(t, env, id, time.Second, &res)
			if len(res.Subscriptions) != 1 || res.Subscriptions[0].Outcome != workflows.OutcomeDelivered {
				t.Fatalf("crowded delivery's result %+v", res)
			}
			t.Logf("a crowded first attempt: %v", c)
			testenv.RecordGolden(t, h, "delivery_crowded.json",
				func(r worker.WorkflowReplayer) { r.RegisterWorkflow(workflows.DeliveryWorkflow) })
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatal("no delivery of A's made its first attempt as a regular activity after a local refusal")
}

// crowdedLocally reports whether a local attempt of h failed as crowded.
func crowdedLocally(h *historypb.History) bool {
	for _, ev := range h.GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() == "LocalActivity" && m.GetFailure().GetApplicationFailureInfo().GetType() == activities.ErrLocalAttemptCrowded {
			return true
		}
	}
	return false
}
