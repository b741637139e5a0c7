package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Search attributes are for operators, never a condition of delivery. On
// a real server whose namespace lacks them (Temporal Cloud, where workers
// may not register them, or a namespace made by hand), an event is still
// delivered: StartDelivery falls back to a start without them, and the
// workflow, started without them, does not upsert Outcome (the server
// would fail its workflow task on every retry). The same holds for a
// workflow an earlier release's dispatcher started without attributes
// during a rolling deploy.
func TestDeliveryWithoutSearchAttributesInTheNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devtemporal.Start(devtemporal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := bareNamespace(ctx, t, srv.Addr(), "bare")

	f := newDeliveryFixture(t)
	rc := newReceiver(t, 200)
	f.Subscribe(t, rc.URL)
	const queue = "deliveries"
	w := sdkworker.New(c, queue, sdkworker.Options{})
	worker.Register(w, f.Acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	t.Run("StartDelivery", func(t *testing.T) {
		ev := f.publish(t)
		run, bare, err := workflows.StartDelivery(ctx, c, ev, queue, defaultSchedule)
		if err != nil {
			t.Fatalf("start refused, the event would wait in the outbox forever: %v", err)
		}
		if !bare {
			t.Error("StartDelivery did not report its start without search attributes: the dispatcher would not log it")
		}
		checkDelivered(ctx, t, run)
		desc, err := c.DescribeWorkflow(ctx, workflows.DeliveryWorkflowID(ev.ID), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := desc.TypedSearchAttributes.GetKeyword(searchattr.EventID); ok {
			t.Error("EventId set in a namespace that does not define it")
		}
		if s, err := desc.GetStaticSummary(); err != nil || s != "Deliver "+string(ev.Type)+" event to 1 subscription" {
			t.Errorf("summary %q, %v: the fallback start must keep it", s, err)
		}
	})
	t.Run("started without attributes", func(t *testing.T) {
		ev := f.publish(t)
		opts := workflows.DeliveryStartOptions(ev, queue, 0)
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		run, err := c.ExecuteWorkflow(ctx, opts, workflows.DeliveryWorkflow,
			&workflows.DeliveryInput{EventID: ev.ID, Schedule: activities.Durations(defaultSchedule), Recipients: ev.Recipients})
		if err != nil {
			t.Fatal(err)
		}
		checkDelivered(ctx, t, run)
	})
	if n := rc.Count(); n != 2 {
		t.Errorf("receiver got %d requests, want one per event", n)
	}
}

// checkDelivered waits for run's result: delivered. A workflow task that
// fails on every retry never completes, so the wait is bounded.
func checkDelivered(ctx context.Context, t *testing.T, run client.WorkflowRun) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var res workflows.DeliveryResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("workflow did not complete (is its workflow task failing?): %v", err)
	}
	if res.Outcome != workflows.OutcomeDelivered {
		t.Fatalf("result %+v", res)
	}
}

// bareNamespace registers a namespace without our search attributes, as
// an operator would by hand, and returns a client of it once the
// frontend serves it.
func bareNamespace(ctx context.Context, t *testing.T, addr, name string) client.Client {
	t.Helper()
	nc, err := client.NewNamespaceClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	sa, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: name})
	if err != nil || len(sa.GetCustomAttributes()) != 0 {
		t.Fatalf("a new namespace has custom attributes %v, %v", sa.GetCustomAttributes(), err)
	}
	// The frontend's namespace cache learns of a new namespace within its
	// refresh interval; until then a start fails with NamespaceNotFound.
	for {
		_, err := c.DescribeWorkflowExecution(ctx, "none", "")
		var nf *serviceerror.NamespaceNotFound
		if !errors.As(err, &nf) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}
