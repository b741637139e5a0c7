package outbox_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/outbox"
)

// Scrapes within the cache's lifetime share one query, however many run
// at once; the oldest event's age still rises between queries; past the
// lifetime the next scrape reads again. The lifetime is long enough that
// an INSERT, a second's sleep and 8 scrapes fit in it on a loaded machine.
func TestBacklogCollectorCache(t *testing.T) {
	f := newBacklogFixture(t)
	f.wait(2)
	c := outbox.NewBacklogCollector(f.st, nil)
	var queries atomic.Int64
	const ttl = 5 * time.Second
	outbox.CountBacklogQueries(c, &queries, ttl)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	first := gather(t, reg)
	readAt := time.Now()
	f.wait(3) // not seen until the reading expires
	time.Sleep(time.Second)
	var wg sync.WaitGroup
	seconds := make([]map[string]float64, 8)
	for i := range seconds {
		wg.Go(func() { seconds[i] = gather(t, reg) })
	}
	wg.Wait()
	if n := queries.Load(); n != 1 {
		t.Errorf("%d queries for 9 scrapes within %v, want 1", n, ttl)
	}
	for _, got := range seconds {
		if got["webhook_outbox_undispatched_events"] != 2 {
			t.Errorf("a scrape within %v: undispatched = %v, want the reading's 2", ttl, got["webhook_outbox_undispatched_events"])
		}
		if rise := got["webhook_outbox_oldest_undispatched_age_seconds"] - first["webhook_outbox_oldest_undispatched_age_seconds"]; rise < 1 || rise > ttl.Seconds() {
			t.Errorf("the oldest age rose by %.2f s over a second between scrapes sharing a reading, want about 1", rise)
		}
	}

	time.Sleep(ttl - time.Since(readAt))
	got := gather(t, reg)
	if n := queries.Load(); n != 2 {
		t.Errorf("%d queries after the reading expired, want 2", n)
	}
	if got["webhook_outbox_undispatched_events"] != 5 {
		t.Errorf("after the reading expired: undispatched = %v, want 5", got["webhook_outbox_undispatched_events"])
	}
}

// A failed query is kept for the cache's lifetime like a reading: a
// second scrape within it sends no query to the struggling database, and
// each scrape is left without the gauges and counted. The lifetime is a
// minute, so the test does not depend on timing.
func TestBacklogCollectorCachesFailure(t *testing.T) {
	f := newBacklogFixture(t)
	c := outbox.NewBacklogCollector(f.st, nil)
	var queries atomic.Int64
	outbox.CountBacklogQueries(c, &queries, time.Minute)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	f.db.Close()
	for i := range 2 {
		got := gather(t, reg)
		if _, ok := got["webhook_outbox_undispatched_events"]; ok {
			t.Errorf("database closed: the backlog gauges are exported: %v", got)
		}
		if got["webhook_outbox_backlog_query_failures_total"] != float64(i+1) {
			t.Errorf("database closed, scrape %d: failures = %v, want %d", i+1, got["webhook_outbox_backlog_query_failures_total"], i+1)
		}
	}
	if n := queries.Load(); n != 1 {
		t.Errorf("%d queries for two scrapes within a minute of a failure, want 1 (the failure is reused)", n)
	}
}
