package devtemporal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

func customAttributes(ctx context.Context, t *testing.T, c client.Client, ns string) map[string]enumspb.IndexedValueType {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetCustomAttributes()
}

func nsRequest(name string, retention time.Duration) *workflowservice.RegisterNamespaceRequest {
	return &workflowservice.RegisterNamespaceRequest{Namespace: name, WorkflowExecutionRetentionPeriod: durationpb.New(retention)}
}

// On the file-backed server of make dev (unused visibility indexes
// dropped), a workflow is found by each attribute, SubscriptionIds (a
// KeywordList, searched through its full-text table) included. A database
// file from an earlier release, whose namespace has no attributes, gets
// them at the next start.
func TestSearchAttributesOnAFileFromAnEarlierRelease(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The earlier release: a namespace created without them.
	srv := start(t, dbFile)
	nc, err := client.NewNamespaceClient(client.Options{HostPort: srv.Addr(), Logger: quietSDK})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Register(ctx, nsRequest("earlier", 24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	srv.Stop()

	srv, err = Start(Options{DatabaseFile: dbFile, Namespace: "earlier"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "earlier", Logger: quietSDK})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := customAttributes(ctx, t, c, "earlier"); len(got) != len(searchattr.Types()) {
		t.Fatalf("after the restart the namespace has %v", got)
	}
	w := worker.New(c, "q", worker.Options{})
	w.RegisterWorkflow(echo)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sub1, sub2 := "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
	opts := client.StartWorkflowOptions{ID: "attributed", TaskQueue: "q", TypedSearchAttributes: temporal.NewSearchAttributes(
		searchattr.WorkspaceID.ValueSet("ws-1"), searchattr.EventType.ValueSet("test.created"),
		searchattr.EventID.ValueSet("ev-1"), searchattr.SubscriptionIDs.ValueSet([]string{sub1, sub2}),
		searchattr.APIKeyID.ValueSet("key-1"), searchattr.Outcome.ValueSet("exhausted"),
	)}
	// The server's namespace cache takes up to its refresh interval to
	// see attributes added to an existing namespace: until then a start
	// carrying them is refused, and the outbox retries it.
	began := time.Now()
	for {
		run, err := c.ExecuteWorkflow(ctx, opts, echo, "x")
		if err == nil {
			if err := run.Get(ctx, nil); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Since(began) > 30*time.Second {
			t.Fatalf("start with the attributes still refused after 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("a start carrying the attributes was accepted %v after the server started", time.Since(began).Round(100*time.Millisecond))
	for _, q := range []string{
		`WorkspaceId = "ws-1"`, `EventType = "test.created"`, `EventId = "ev-1"`, `SubscriptionIds = "` + sub2 + `"`,
		`ApiKeyId = "key-1"`, `Outcome = "exhausted"`, `SubscriptionIds = "` + sub1 + `" AND Outcome = "exhausted"`,
	} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "earlier", Query: q})
			if err != nil {
				t.Fatalf("list %s: %v", q, err)
			}
			if len(resp.Executions) == 1 && resp.Executions[0].Execution.WorkflowId == "attributed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("list %s: %d executions", q, len(resp.Executions))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "earlier", Query: `SubscriptionIds = "33333333-3333-3333-3333-333333333333"`})
	if err != nil || len(resp.Executions) != 0 {
		t.Fatalf("an id in no list found %v, %v", resp, err)
	}
}
