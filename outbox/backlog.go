package outbox

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// BacklogLimit is where webhook_outbox_undispatched_events saturates: the
// count stops there, so a query costs no more than this many index
// entries however large the backlog grows (it is largest exactly when the
// database is busiest). Past it, the oldest event's age tells the rest.
const BacklogLimit = 10_000

// BacklogTTL is how long one reading of the backlog serves scrapes: at
// most one query per replica per BacklogTTL, whatever scrapes it (several
// Prometheus servers, a person with curl).
const BacklogTTL = 10 * time.Second

// backlogTimeout bounds the backlog query of one scrape, well inside
// Prometheus's default 10 s scrape timeout.
const backlogTimeout = 2 * time.Second

var (
	undispatchedDesc = prometheus.NewDesc("webhook_outbox_undispatched_events",
		"Accepted events whose delivery workflow is not started yet (read from the events table at most every 10 s, counted up to 10000).", nil, nil)
	oldestAgeDesc = prometheus.NewDesc("webhook_outbox_oldest_undispatched_age_seconds",
		"How long the oldest undispatched event has waited for its delivery workflow (0 when none waits), by the database's clock.", nil, nil)
)

// BacklogCollector exports the outbox's backlog, read from PostgreSQL at
// a scrape and reused by the scrapes of the next BacklogTTL; between
// readings the oldest event's age keeps rising with the time elapsed, as
// it does while that event waits. The outbox is shared, so every worker
// replica reports the same values: aggregate with max(), not sum(). When
// the query fails or times out the two gauges are left out of that scrape
// (never failing it) and webhook_outbox_backlog_query_failures_total
// counts it. A failure is kept for BacklogTTL like a reading: the scrapes
// in that time reuse it (each left without the gauges and counted) rather
// than each sending a 2 s query to a database that is already struggling.
type BacklogCollector struct {
	read     func(context.Context, int) (store.Backlog, error)
	ttl      time.Duration
	log      *slog.Logger
	failures prometheus.Counter
	warned   atomic.Bool

	// mu is held while a query runs, so concurrent scrapes wait for it
	// and share its reading instead of querying too.
	mu      sync.Mutex
	last    store.Backlog
	lastErr error     // the last query's failure, reused like a reading
	readAt  time.Time // when last or lastErr was read; zero: nothing to reuse
}

// NewBacklogCollector returns the collector; register it on the worker's
// registry.
func NewBacklogCollector(st *store.Store, log *slog.Logger) *BacklogCollector {
	return &BacklogCollector{read: st.Events().Backlog, ttl: BacklogTTL, log: log,
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_outbox_backlog_query_failures_total",
			Help: "Scrapes left without the backlog gauges because the outbox backlog query failed or timed out (a failure, like a reading, serves the scrapes of the next 10 s).",
		})}
}

// Describe implements prometheus.Collector.
func (c *BacklogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- undispatchedDesc
	ch <- oldestAgeDesc
	c.failures.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *BacklogCollector) Collect(ch chan<- prometheus.Metric) {
	if b, err := c.backlog(); err != nil {
		c.failures.Inc()
		// Once per process: a database outage would otherwise log at
		// every scrape, and the counter already tells it.
		if c.warned.CompareAndSwap(false, true) && c.log != nil {
			c.log.Warn("outbox backlog not measured for this scrape; later failures are only counted (webhook_outbox_backlog_query_failures_total)",
				slog.Any("error", err))
		}
	} else {
		ch <- prometheus.MustNewConstMetric(undispatchedDesc, prometheus.GaugeValue, float64(b.Undispatched))
		ch <- prometheus.MustNewConstMetric(oldestAgeDesc, prometheus.GaugeValue, b.OldestAge.Seconds())
	}
	c.failures.Collect(ch)
}

// backlog returns the last reading (or failure) while it is fresh, a
// reading's age advanced to now, or else reads again.
func (c *BacklogCollector) backlog() (store.Backlog, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readAt.IsZero() || time.Since(c.readAt) >= c.ttl {
		ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
		defer cancel()
		c.last, c.lastErr = c.read(ctx, BacklogLimit)
		c.readAt = time.Now()
	}
	if c.lastErr != nil {
		return store.Backlog{}, c.lastErr
	}
	b := c.last
	if b.Undispatched > 0 {
		b.OldestAge += time.Since(c.readAt)
	}
	return b, nil
}
