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

// BacklogLimit is where webhook_outbox_undispatched_events saturates, bounding the query.
const BacklogLimit = 10_000

// BacklogTTL is how long one reading of the backlog serves scrapes.
const BacklogTTL = 10 * time.Second

// backlogTimeout is well inside Prometheus's default 10 s scrape timeout.
const backlogTimeout = 2 * time.Second

var (
	undispatchedDesc = prometheus.NewDesc("webhook_outbox_undispatched_events",
		"Accepted events whose delivery workflow is not started yet (read from the events table at most every 10 s, counted up to 10000).", nil, nil)
	oldestAgeDesc = prometheus.NewDesc("webhook_outbox_oldest_undispatched_age_seconds",
		"How long the oldest undispatched event has waited for its delivery workflow (0 when none waits), by the database's clock.", nil, nil)
)

// BacklogCollector exports the outbox's backlog (aggregate replicas with max()).
// A failed query, like a reading, is reused for BacklogTTL to spare the database.
type BacklogCollector struct {
	read     func(context.Context, int) (store.Backlog, error)
	ttl      time.Duration
	log      *slog.Logger
	failures prometheus.Counter
	warned   atomic.Bool

	// mu is held while a query runs, so concurrent scrapes share its reading.
	mu      sync.Mutex
	last    store.Backlog
	lastErr error     // the last query's failure, reused like a reading
	readAt  time.Time // when last or lastErr was read; zero: nothing to reuse
}

// NewBacklogCollector returns the collector for the worker's registry.
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
		// Once per process: the counter tells the rest.
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
