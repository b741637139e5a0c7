package devtemporal

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
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
	// Visibility still lists the run by the filters operators use, with the
	// unused indexes gone (see unusedVisibilityIndexes).
	for _, q := range []string{`WorkflowId = "echo-1"`, `WorkflowType = "echo"`, `ExecutionStatus = "Completed"`, `TaskQueue = "q"`} {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
		if err != nil || len(resp.Executions) != 1 {
			t.Fatalf("list %s: %v, %v", q, resp, err)
		}
	}
}

// The schema is set up with the unused visibility indexes dropped and the
// ones operators' lists use kept.
func TestUnusedVisibilityIndexesDropped(t *testing.T) {
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	if _, err := sqlConfig(Options{DatabaseFile: dbFile, Namespace: "default"}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dbFile)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kept, dropped int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('default_idx', 'by_keyword_01', 'by_task_queue', 'by_workflow_id')`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('by_bool_01', 'by_history_length', 'by_temporal_keyword_01')`).Scan(&dropped); err != nil {
		t.Fatal(err)
	}
	if kept != 4 || dropped != 0 {
		t.Fatalf("visibility indexes: %d of 4 kept, %d of 3 unused ones left", kept, dropped)
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
