package store_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/harness/seed"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// latencies collects the duration of each operation of a benchmark and
// reports their p50 and p99 in milliseconds.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	at := func(q float64) float64 {
		return float64(l.d[int(q*float64(len(l.d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// parallel runs op at 32 concurrent clients (on any number of CPUs) and
// reports its latency percentiles beside ns/op (which, at 32 clients, is
// wall time per operation: 1e9/ns/op is the throughput).
func parallel(b *testing.B, op func(context.Context) error) {
	b.Helper()
	var lat latencies
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		ctx := context.Background()
		for pb.Next() {
			start := time.Now()
			if err := op(ctx); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
		}
		lat.add(mine)
	})
	b.StopTimer()
	lat.report(b)
}

// serial runs op one at a time and reports its latency percentiles.
func serial(b *testing.B, op func(context.Context) error) {
	b.Helper()
	var lat latencies
	ctx := context.Background()
	var mine []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
		mine = append(mine, time.Since(start))
	}
	b.StopTimer()
	lat.add(mine)
	lat.report(b)
}

// BenchmarkProjectsList100k lists pages of a workspace holding 100,000
// projects, through store.Projects.List (everything GET /v1/projects does
// in the database), serially and at 32 clients, with and without filters;
// "Q" is the bare 25-row page query at 32 clients, the ceiling.
//
// Run: go test -run '^$' -bench ProjectsList100k ./internal/store
func BenchmarkProjectsList100k(b *testing.B) {
	db := pgtest.NewDB(b)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	st := store.New(db)
	ctx := context.Background()
	ws, err := st.Bootstrap(ctx, "Bench", "bench-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		b.Fatal(err)
	}
	if err := seed.Projects(ctx, db, ws.WorkspaceID, 100_000); err != nil {
		b.Fatal(err)
	}
	projects := st.Projects("https://app.test")
	list := func(f models.ProjectFilter) func(context.Context) error {
		f.WorkspaceID = ws.WorkspaceID
		if f.Page.Page == 0 {
			f.Page = models.PageRequest{Page: 1, PerPage: 25}
		}
		return func(ctx context.Context) error {
			p, err := projects.List(ctx, f)
			if err == nil && len(p.Items) == 0 && f.Page.Page == 1 {
				b.Fatalf("empty page for %+v", f)
			}
			return err
		}
	}
	q := func(ctx context.Context) error {
		rows, err := db.DB.QueryContext(ctx, seed.ProjectsPageQuery, ws.WorkspaceID)
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		if n != 25 {
			b.Fatalf("Q read %d rows", n)
		}
		return rows.Err()
	}
	b.Run("Q/32clients", func(b *testing.B) { parallel(b, q) })
	b.Run("page1/32clients", func(b *testing.B) { parallel(b, list(models.ProjectFilter{})) })
	b.Run("page1/serial", func(b *testing.B) { serial(b, list(models.ProjectFilter{})) })
	b.Run("page2000/serial", func(b *testing.B) {
		serial(b, list(models.ProjectFilter{Page: models.PageRequest{Page: 2000, PerPage: 25}}))
	})
	b.Run("taskType/32clients", func(b *testing.B) {
		parallel(b, list(models.ProjectFilter{TaskType: models.TaskTabularRegression}))
	})
	// A name that matches one project, and one that matches 1,000.
	b.Run("nameOne/serial", func(b *testing.B) { serial(b, list(models.ProjectFilter{Name: "-0054321"})) })
	b.Run("nameThousand/serial", func(b *testing.B) { serial(b, list(models.ProjectFilter{Name: "-00543"})) })
	b.Run("nameAll/serial", func(b *testing.B) { serial(b, list(models.ProjectFilter{Name: "seed-"})) })
}

// BenchmarkDeliveriesDeepPage lists page 1 and page 1,000 (perPage 25) of a
// subscription holding 1,000,000 delivery records, through
// store.Deliveries.List (everything GET …/deliveries does in the database).
// The target: page 1,000 within twice page 1's latency.
//
// Run: go test -run '^$' -bench DeliveriesDeepPage -timeout 30m ./internal/store
func BenchmarkDeliveriesDeepPage(b *testing.B) {
	db := pgtest.NewDB(b)
	st := store.New(db)
	ctx := context.Background()
	ws, err := st.Bootstrap(ctx, "Bench", "bench-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		b.Fatal(err)
	}
	sub, err := st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
	}, []byte{1}, 0)
	if err != nil {
		b.Fatal(err)
	}
	const records = 1_000_000
	if err := seed.Deliveries(ctx, db, sub.ID, records); err != nil {
		b.Fatal(err)
	}
	for _, page := range []int{1, 1000, 40_000} {
		b.Run("page"+strconv.Itoa(page), func(b *testing.B) {
			serial(b, func(ctx context.Context) error {
				p, err := st.Deliveries().List(ctx, ws.WorkspaceID, sub.ID, models.PageRequest{Page: page, PerPage: 25})
				if err == nil && (p.Meta.TotalItems != records || len(p.Items) != 25) {
					b.Fatalf("page %d: %d items of %d", page, len(p.Items), p.Meta.TotalItems)
				}
				return err
			})
		})
	}
}
