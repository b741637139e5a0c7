package worker_test

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/worker"
)

// A worker that starts while Temporal is away does not wait for it to
// register the search attributes: it keeps trying in the background and
// registers them once the server (and its namespace) answers.
func TestKeepSearchAttributesWaitsForTemporal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens here yet
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c, err := client.NewLazyClient(client.Options{HostPort: addr, Namespace: "late"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.KeepSearchAttributes(ctx, c, "late", slog.New(slog.DiscardHandler))
	}()
	time.Sleep(2 * time.Second)
	select {
	case <-done:
		t.Fatal("KeepSearchAttributes returned while Temporal was away")
	default:
	}

	// The server comes up, and its operator creates the namespace later still.
	srv, err := devtemporal.Start(devtemporal.Options{Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	op, err := client.Dial(client.Options{HostPort: srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	_, err = op.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: "late", WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("search attributes not registered within 2 minutes of Temporal coming up")
	}
	resp, err := op.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "late"})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range searchattr.Types() {
		if got := resp.GetCustomAttributes()[name]; got != typ {
			t.Errorf("%s: %v, want %v", name, got, typ)
		}
	}
}
