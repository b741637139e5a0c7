package outbox_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/outbox"
)

// The backlog gauges read the outbox at scrape; when the database is
// gone the scrape still succeeds, without them, and the failure is
// counted.
func TestBacklogCollector(t *testing.T) {
	f := newBacklogFixture(t)
	f.wait(2)
	c := outbox.NewBacklogCollector(f.st, nil)
	// Every scrape queries (TestBacklogCollectorCache covers the cache).
	outbox.CountBacklogQueries(c, new(atomic.Int64), 0)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	got := gather(t, reg)
	if got["webhook_outbox_undispatched_events"] != 2 {
		t.Errorf("undispatched = %v, want 2", got["webhook_outbox_undispatched_events"])
	}
	if age := got["webhook_outbox_oldest_undispatched_age_seconds"]; age < 42 || age > 60 {
		t.Errorf("oldest age = %v s, want about 42", age)
	}
	if got["webhook_outbox_backlog_query_failures_total"] != 0 {
		t.Errorf("failures = %v, want 0", got["webhook_outbox_backlog_query_failures_total"])
	}

	f.db.Close()
	got = gather(t, reg)
	if _, ok := got["webhook_outbox_undispatched_events"]; ok {
		t.Errorf("database closed: the backlog gauges are still exported: %v", got)
	}
	if got["webhook_outbox_backlog_query_failures_total"] != 1 {
		t.Errorf("database closed: failures = %v, want 1", got["webhook_outbox_backlog_query_failures_total"])
	}
}

// backlogFixture is a database with a workspace whose events wait.
type backlogFixture struct {
	t  *testing.T
	db *bun.DB
	st *store.Store
	ws uuid.UUID
}

func newBacklogFixture(t *testing.T) *backlogFixture {
	t.Helper()
	db := pgtest.NewDB(t)
	st := store.New(db)
	ws, err := st.Bootstrap(context.Background(), "Backlog", "backlog@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return &backlogFixture{t: t, db: db, st: st, ws: ws.WorkspaceID}
}

// wait stores n undispatched events, accepted 42 s ago.
func (f *backlogFixture) wait(n int) {
	f.t.Helper()
	_, err := f.db.NewRaw(`INSERT INTO events (id, workspace_id, type, data, date_created, recipients)
		SELECT gen_random_uuid(), ?, 'test.updated', '{}'::jsonb, now() - interval '42 seconds', ARRAY[gen_random_uuid()]
		FROM generate_series(1, ?)`, f.ws, n).Exec(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
}

// gather scrapes reg and returns each series' value by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			out[f.GetName()] = value(f.GetType(), m)
		}
	}
	return out
}

func value(typ dto.MetricType, m *dto.Metric) float64 {
	if typ == dto.MetricType_COUNTER {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}
