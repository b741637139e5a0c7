package devtemporal

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func noop(context.Context) error { return nil }

// quiet keeps the SDK's per-activity debug lines out of benchmark output.
var quiet = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

func oneActivity(ctx workflow.Context) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return workflow.ExecuteActivity(ctx, noop).Get(ctx, nil)
}

// BenchmarkOneActivityWorkflow measures completed one-activity workflows per
// second on the file-backed embedded server, with the dev command's SQLite
// settings and with SQLite's durable defaults:
//
//	go test -run '^$' -bench OneActivityWorkflow -benchtime 300x ./internal/devtemporal/
func BenchmarkOneActivityWorkflow(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "wal-syncoff"
		if durable {
			name = "sqlite-defaults"
		}
		b.Run(name, func(b *testing.B) {
			srv, err := Start(Options{DatabaseFile: filepath.Join(b.TempDir(), "t.db"), DurableSQLite: durable})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Stop()
			c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "default", Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			w := worker.New(c, "bench", worker.Options{})
			w.RegisterWorkflow(oneActivity)
			w.RegisterActivity(noop)
			if err := w.Start(); err != nil {
				b.Fatal(err)
			}
			defer w.Stop()
			ctx := context.Background()
			const concurrency = 16
			ids := make(chan int)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range ids {
						run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
							ID: fmt.Sprintf("bench-%d", i), TaskQueue: "bench",
						}, oneActivity)
						if err == nil {
							err = run.Get(ctx, nil)
						}
						if err != nil {
							b.Error(err)
						}
					}
				}()
			}
			for i := range b.N {
				ids <- i
			}
			close(ids)
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "workflows/s")
		})
	}
}
