package searchattr_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// Replicas starting together each register the search attributes in a
// namespace that has none: all succeed, and the namespace ends with each
// attribute once, of its type. A second round finds nothing to add.
func TestEnsureRacingReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devtemporal.Start(devtemporal.Options{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	// A namespace made by the operator, not by this package, starts bare.
	nc, err := client.NewNamespaceClient(client.Options{HostPort: srv.Addr(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	week := 7 * 24 * time.Hour
	if err := nc.Register(ctx, nsRequest("bare", week)); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "bare", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := customAttributes(ctx, t, c, "bare"); len(got) != 0 {
		t.Fatalf("a new namespace already has %v", got)
	}

	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = searchattr.Ensure(ctx, c, "bare") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	if err := searchattr.Ensure(ctx, c, "bare"); err != nil {
		t.Fatalf("second round: %v", err)
	}
	got := customAttributes(ctx, t, c, "bare")
	want := searchattr.Types()
	if len(got) != len(want) {
		t.Fatalf("custom attributes %v, want %v", got, want)
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("%s: %v, want %v", name, got[name], typ)
		}
	}
	// The server's own namespace has them from its creation.
	d, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "default", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := customAttributes(ctx, t, d, "default"); len(got) != len(want) {
		t.Fatalf("default namespace: %v", got)
	}
}

// An attribute of ours registered under another type is reported, never
// papered over: lists by it would not mean what the docs say.
func TestEnsureWrongType(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devtemporal.Start(devtemporal.Options{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	nc, err := client.NewNamespaceClient(client.Options{HostPort: srv.Addr(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Register(ctx, nsRequest("typed", 24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "typed", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: "typed", SearchAttributes: map[string]enumspb.IndexedValueType{"Outcome": enumspb.INDEXED_VALUE_TYPE_TEXT},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := searchattr.Ensure(ctx, c, "typed"); err == nil {
		t.Fatal("Outcome registered as Text was accepted")
	}
}

var quiet = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))

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
