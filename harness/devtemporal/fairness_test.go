package devtemporal

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// TestBacklogServedByPriorityThenFairly queues workflow tasks with no poller,
// then takes them one by one: a priority-1 task comes first, and a second
// workspace's task is not left behind the first one's backlog (matching.
// enableFairness; first come, first served would hand it out last).
func TestBacklogServedByPriorityThenFairly(t *testing.T) {
	srv := start(t, filepath.Join(t.TempDir(), "temporal.db"))
	defer srv.Stop()
	c := dial(t, srv)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const queue, flood = "fair", 20
	startOne := func(id string, p temporal.Priority) {
		t.Helper()
		_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, Priority: p}, "Never")
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range flood {
		startOne(fmt.Sprintf("a-%02d", i), temporal.Priority{PriorityKey: 3, FairnessKey: "workspace-a"})
	}
	startOne("b", temporal.Priority{PriorityKey: 3, FairnessKey: "workspace-b"})
	startOne("a-test", temporal.Priority{PriorityKey: 1, FairnessKey: "workspace-a"})
	waitForBacklog(ctx, t, c, queue, flood+2)
	// The backlog counts tasks as they are written; matching's reader loads
	// them into memory a moment later, and a poll is answered from memory.
	// Polled at once, a-00 (loaded with the first write) could be the only
	// task there yet (seen in CI: a-test second).
	time.Sleep(time.Second)

	var order []string
	for range flood + 2 {
		resp, err := c.WorkflowService().PollWorkflowTaskQueue(ctx, &workflowservice.PollWorkflowTaskQueueRequest{
			Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			Identity: "fairness-test",
		})
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, resp.GetWorkflowExecution().GetWorkflowId())
	}
	if order[0] != "a-test" {
		t.Errorf("the priority-1 task came at %d of %v", slices.Index(order, "a-test")+1, order)
	}
	if i := slices.Index(order, "b"); i < 0 || i > 3 {
		t.Errorf("workspace b's one task came at %d of %v, behind workspace a's backlog", i+1, order)
	}
}

func waitForBacklog(ctx context.Context, t *testing.T, c client.Client, queue string, n int64) {
	t.Helper()
	for {
		resp, err := c.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
			Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_WORKFLOW, ReportStats: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStats().GetApproximateBacklogCount() >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("backlog %d, want %d", resp.GetStats().GetApproximateBacklogCount(), n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
