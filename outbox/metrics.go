package outbox

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// NewSentCounter registers outbox_sent_total, by outbox, on reg.
func NewSentCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	return newCounter(reg, "outbox_sent_total",
		"Committed changes the worker's outbox relays told Temporal of, by outbox (events: delivery workflows started; api_keys, webhook_secrets: lifecycle workflows signalled).")
}

// NewSendFailuresCounter registers outbox_send_failures_total, by outbox, on reg.
func NewSendFailuresCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	return newCounter(reg, "outbox_send_failures_total",
		"Temporal calls of the worker's outbox relays that failed for the change itself (not for Temporal being unavailable), by outbox; each holds its change back, 1 s after its first failure, doubling, at most 5 minutes.")
}

func newCounter(reg prometheus.Registerer, name, help string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"outbox"})
	for _, box := range store.Outboxes {
		c.WithLabelValues(box) // exported at 0 from the start
	}
	reg.MustRegister(c)
	return c
}

// RegisterStartLimit registers outbox_start_limit and
// outbox_starts_in_flight, the events relay's admission control, on reg.
func RegisterStartLimit(reg prometheus.Registerer, l *StartLimiter) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_start_limit",
			Help: "How many delivery workflow starts the events outbox relay lets be in flight at once: it falls while Temporal answers them slower than it did, and rises back to 32 while it does not (docs/operations.md#priorities-and-fairness)."},
			func() float64 { return float64(l.Limit()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_starts_in_flight",
			Help: "Delivery workflow starts of the events outbox relay in flight now."},
			func() float64 { return float64(l.InFlight()) }))
}
