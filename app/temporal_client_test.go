package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/internal/config"
)

// On a server that sends commands to workers, the SDK's worker heartbeat
// machinery would long-poll a task queue named for each client instance
// (temporal-sys/worker-commands/<namespace>/<uuid>), and its metrics would
// carry that name: a new series for every process start. The client
// TemporalClient builds does not heartbeat, so every task_queue label is
// one of ours.
func TestTemporalClientLabelsOnlyOurTaskQueues(t *testing.T) {
	srv, err := devtemporal.Start(devtemporal.Options{WorkerCommands: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	reg := prometheus.NewRegistry()
	cfg := config.Config{TemporalAddress: srv.Addr(), TemporalNamespace: "default"}
	c, closer, err := TemporalClient(cfg, slog.New(slog.DiscardHandler), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	defer c.Close()
	w := sdkworker.New(c, "ours", sdkworker.Options{})
	w.RegisterWorkflow(func(workflow.Context) error { return nil })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// Wait until the worker's own polls are in the registry (the bridge
	// reports every second); the heartbeat worker starts with the worker.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		queues := taskQueueLabels(t, reg)
		if queues["ours"] {
			time.Sleep(2 * time.Second) // one more report, for any later poller
			for q := range taskQueueLabels(t, reg) {
				// "none": the SDK's label of series of no task queue.
				if q != "none" && !strings.HasPrefix(q, "ours") {
					t.Errorf("a series labelled task_queue=%q", q)
				}
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no series of task queue ours within 30 s: %v", queues)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// taskQueueLabels are the task_queue label values in reg's series.
func taskQueueLabels(t *testing.T, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "task_queue" {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}
