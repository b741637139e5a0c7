package outbox_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
	"github.com/openlayer-ai/workspace-service/workflows"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// BenchmarkOutboxDrain measures how fast a backlog of b.N events, accepted
// while Temporal was away, leaves the outbox once it is back, against the
// rate at which the same Temporal server starts the same workflows when
// called directly with the same parallelism (no database, no claims): the
// outbox should drain at least as fast as Temporal starts workflows.
//
//	go test -run '^$' -bench OutboxDrain -benchtime 100000x ./outbox/
func BenchmarkOutboxDrain(b *testing.B) {
	srv, err := devtemporal.Start(devtemporal.Options{DatabaseFile: filepath.Join(b.TempDir(), "t.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	quiet := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "default", Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(b))
	ws, err := st.Bootstrap(ctx, "Drain", "drain-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		b.Fatal(err)
	}
	// The backlog: b.N events with one recipient each, old enough to sweep.
	// No worker polls the queue, so the workflows only start.
	_, err = st.DB().NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, 'test.created', '{}'::jsonb, now() - interval '1 hour', ARRAY[gen_random_uuid()]
		FROM generate_series(1, ?)`, ws.WorkspaceID, b.N).Exec(ctx)
	if err != nil {
		b.Fatal(err)
	}
	schedule := []time.Duration{time.Second}
	d := outbox.Relay[models.Event]{Queue: outbox.NewEvents(outbox.Deps{Temporal: c, Store: st, TaskQueue: "drain"}, schedule)}

	// The ceiling first (so the drain never runs on a server warmed by
	// it): the same starts, straight to Temporal.
	ids := make(chan uuid.UUID)
	var wg sync.WaitGroup
	start := time.Now()
	for range outbox.DefaultParallelism {
		wg.Go(func() {
			for id := range ids {
				ev := models.Event{ID: id, WorkspaceID: id, Type: models.EventTestCreated, Recipients: []uuid.UUID{uuid.New()}}
				_, _, err := workflows.StartDelivery(ctx, c, ev, "ceiling", schedule)
				if err != nil {
					b.Error(err)
				}
			}
		})
	}
	for range b.N {
		ids <- uuid.New()
	}
	close(ids)
	wg.Wait()
	startRate := float64(b.N) / time.Since(start).Seconds()
	b.ResetTimer()
	start = time.Now()
	drained, err := d.Drain(ctx)
	if err != nil {
		b.Fatal(err)
	}
	drainRate := float64(drained) / time.Since(start).Seconds()
	b.StopTimer()
	if drained != b.N {
		b.Fatalf("drained %d of %d", drained, b.N)
	}

	b.ReportMetric(drainRate, "drained/s")
	b.ReportMetric(startRate, "temporal-starts/s")
	b.ReportMetric(drainRate/startRate, "ratio")
}
