package outbox

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// BacklogLimit is where webhook_outbox_undispatched_events saturates: the
// count stops there, so a huge backlog costs a scrape no more than this
// many index entries. Past it, the oldest event's age tells the rest.
const BacklogLimit = 100_000

// backlogTimeout bounds the backlog query of one scrape, well inside
// Prometheus's default 10 s scrape timeout.
const backlogTimeout = 2 * time.Second

var (
	undispatchedDesc = prometheus.NewDesc("webhook_outbox_undispatched_events",
		"Accepted events whose delivery workflow is not started yet (read at scrape from the events table, counted up to 100000).", nil, nil)
	oldestAgeDesc = prometheus.NewDesc("webhook_outbox_oldest_undispatched_age_seconds",
		"How long the oldest undispatched event has waited for its delivery workflow (0 when none waits), by the database's clock.", nil, nil)
)

// BacklogCollector exports the outbox's backlog, read from PostgreSQL at
// each scrape. The outbox is shared, so every worker replica reports the
// same values: aggregate with max(), not sum(). When the query fails or
// times out the two gauges are left out of that scrape (never failing
// it) and webhook_outbox_backlog_query_failures_total counts the failure.
type BacklogCollector struct {
	store    *store.Store
	log      *slog.Logger
	failures prometheus.Counter
	warned   atomic.Bool
}

// NewBacklogCollector returns the collector; register it on the worker's
// registry.
func NewBacklogCollector(st *store.Store, log *slog.Logger) *BacklogCollector {
	return &BacklogCollector{store: st, log: log,
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_outbox_backlog_query_failures_total",
			Help: "Scrapes whose outbox backlog query failed or timed out (the backlog gauges were left out).",
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
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	b, err := c.store.Events().Backlog(ctx, BacklogLimit)
	if err != nil {
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
