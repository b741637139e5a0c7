package devtemporal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func echo(ctx workflow.Context, s string) (string, error) { return s, nil }

// TestRestartKeepsHistory runs a workflow, restarts the server on the same
// SQLite file (as a second `make dev` does) and reads the result back.
func TestRestartKeepsHistory(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv := start(t, dbFile)
	c := dial(t, srv)
	w := worker.New(c, "q", worker.Options{})
	w.RegisterWorkflow(echo)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "echo-1", TaskQueue: "q"}, echo, "hello")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil || got != "hello" {
		t.Fatalf("result %q, %v", got, err)
	}
	w.Stop()
	c.Close()
	srv.Stop()

	srv = start(t, dbFile)
	defer srv.Stop()
	c = dial(t, srv)
	defer c.Close()
	got = ""
	if err := c.GetWorkflow(ctx, "echo-1", "").Get(ctx, &got); err != nil || got != "hello" {
		t.Fatalf("after restart: result %q, %v", got, err)
	}
}

func start(t *testing.T, dbFile string) *Server {
	t.Helper()
	srv, err := Start(Options{DatabaseFile: dbFile, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func dial(t *testing.T, srv *Server) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
