package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/procstack"
)

// serverMetrics is a Temporal server's /metrics in the shape v1.32 serves
// it, with the series serverWaits reads and neighbours it must not.
func serverMetrics(starts, shard int) string {
	return fmt.Sprintf(`# TYPE service_latency histogram
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="history",le="1"} %[1]d
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="history",le="+Inf"} %[1]d
service_latency_sum{namespace="default",operation="StartWorkflowExecution",service_name="history"} %[3]g
service_latency_count{namespace="default",operation="StartWorkflowExecution",service_name="history"} %[1]d
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="frontend",le="+Inf"} %[1]d
service_latency_sum{namespace="default",operation="StartWorkflowExecution",service_name="frontend"} %[1]d
service_latency_count{namespace="default",operation="StartWorkflowExecution",service_name="frontend"} %[1]d
# TYPE semaphore_latency histogram
semaphore_latency_bucket{operation="ShardInfo",priority="0",service_name="history",le="+Inf"} %[2]d
semaphore_latency_sum{operation="ShardInfo",priority="0",service_name="history"} %[4]g
semaphore_latency_count{operation="ShardInfo",priority="0",service_name="history"} %[2]d
semaphore_latency_bucket{operation="ShardInfo",priority="1",service_name="history",le="+Inf"} %[2]d
semaphore_latency_sum{operation="ShardInfo",priority="1",service_name="history"} %[4]g
semaphore_latency_count{operation="ShardInfo",priority="1",service_name="history"} %[2]d
# TYPE persistence_latency histogram
persistence_latency_bucket{operation="CreateWorkflowExecution",service_name="history",le="+Inf"} %[1]d
persistence_latency_sum{operation="CreateWorkflowExecution",service_name="history"} %[5]g
persistence_latency_count{operation="CreateWorkflowExecution",service_name="history"} %[1]d
persistence_latency_bucket{operation="UpdateWorkflowExecution",service_name="history",le="+Inf"} %[1]d
persistence_latency_sum{operation="UpdateWorkflowExecution",service_name="history"} %[5]g
persistence_latency_count{operation="UpdateWorkflowExecution",service_name="history"} %[1]d
persistence_latency_bucket{operation="GetWorkflowExecution",service_name="history",le="+Inf"} %[2]d
persistence_latency_sum{operation="GetWorkflowExecution",service_name="history"} %[2]d
persistence_latency_count{operation="GetWorkflowExecution",service_name="history"} %[2]d
`, starts, shard, 0.8*float64(starts), 0.6*float64(shard), 0.05*float64(starts))
}

// meterBetween runs a serverMeter over a window whose server serves first,
// then second.
func meterBetween(t *testing.T, first, second string) (serverWaits, bool, error) {
	t.Helper()
	var body atomic.Pointer[string] // the handler runs on the server's goroutines
	body.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(*body.Load()))
	}))
	defer srv.Close()
	ctx := context.Background()
	m := startServerMeter(ctx, strings.TrimPrefix(srv.URL, "http://"))
	body.Store(&second)
	return m.end(ctx)
}

// TestServerMeterReadsAWindowsWaits: the window's means come from the
// difference of two scrapes, of the history service's series only, every
// priority of the shard's semaphore, and both kinds of workflow write.
func TestServerMeterReadsAWindowsWaits(t *testing.T) {
	w, ok, err := meterBetween(t, serverMetrics(10, 20), serverMetrics(110, 220))
	if err != nil || !ok {
		t.Fatalf("end: %v, %v", ok, err)
	}
	if w.starts.n != 100 || w.starts.mean() < 799 || w.starts.mean() > 801 {
		t.Errorf("starts: %d, mean %v ms; want 100 at 800 ms", int(w.starts.n), w.starts.mean())
	}
	if w.shardWait.n != 400 || w.shardWait.mean() < 599 || w.shardWait.mean() > 601 {
		t.Errorf("shard waits: %d, mean %v ms; want 400 at 600 ms", int(w.shardWait.n), w.shardWait.mean())
	}
	if w.writes.n != 200 || w.writes.mean() < 49 || w.writes.mean() > 51 {
		t.Errorf("writes: %d, mean %v ms; want 200 at 50 ms", int(w.writes.n), w.writes.mean())
	}
	if w.dur <= 0 {
		t.Errorf("the window's duration is %v", w.dur)
	}
}

// TestServerMeterRefusesACounterThatWentBack: a server restarted during
// the window starts its counters again, and the difference means nothing.
func TestServerMeterRefusesACounterThatWentBack(t *testing.T) {
	if _, ok, err := meterBetween(t, serverMetrics(500, 900), serverMetrics(20, 30)); ok || err == nil {
		t.Fatalf("end after a restart: %v, %v; want false and an error", ok, err)
	}
}

// TestServerMeterWithoutServerMetrics: on devtemporal (no address) the
// meter reads nothing and says so.
func TestServerMeterWithoutServerMetrics(t *testing.T) {
	_, ok, err := startServerMeter(context.Background(), "").end(context.Background())
	if ok || err != nil {
		t.Fatalf("end without an address: %v, %v; want false, nil", ok, err)
	}
}

// TestServerTextSaysHowBusyTheShardsWere: 8 s of writes over a 2 s window
// and 4 shards is each shard writing all the time.
func TestServerTextSaysHowBusyTheShardsWere(t *testing.T) {
	h := &harness{st: &procstack.Stack{Temporal: &procstack.Proc{Env: []string{"DB=postgres12", "NUM_HISTORY_SHARDS=4"}}}}
	s := serverWaits{writes: histSum{n: 160, sum: 8}, dur: 2 * time.Second}
	if got := h.serverText(s); !strings.Contains(got, "over its 4 shards: 1.00 s") {
		t.Errorf("serverText = %q; want the shards' writes at 1 s per second", got)
	}
	h.st.Temporal.Env = nil
	if got := h.serverText(s); strings.Contains(got, "shards:") {
		t.Errorf("serverText without NUM_HISTORY_SHARDS = %q; want no per-shard figure", got)
	}
}
