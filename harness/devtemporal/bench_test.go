package devtemporal

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// quiet keeps the SDK's per-activity debug lines out of benchmark output.
var quiet = tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

// BenchmarkOneActivityWorkflow measures completed one-activity workflows per
// second on the file-backed embedded server, with the dev command's SQLite
// settings and with SQLite's durable defaults (RunOneActivityWorkflows,
// which make bench runs as its baseline T against the devtemporal process):
//
//	go test -run '^$' -bench OneActivityWorkflow -benchtime 300x ./harness/devtemporal/
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
			b.ResetTimer()
			res, err := RunOneActivityWorkflows(context.Background(), c, OneActivityOptions{
				TaskQueue: "bench", Concurrency: 16, Count: b.N, IDPrefix: "bench-",
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(res.PerSecond(), "workflows/s")
		})
	}
}
