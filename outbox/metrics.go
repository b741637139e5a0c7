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

// RegisterStartLimit registers outbox_start_limit, the events relay's
// admission control, on reg.
func RegisterStartLimit(reg prometheus.Registerer, l *StartLimiter) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "outbox_start_limit",
		Help: "How many delivery workflow starts the events outbox relay makes at once: halved while the p90 of a window of 16 starts is above OUTBOX_START_TARGET or a start runs out of time, one more per window in time, between 16 and 32 (docs/operations.md#priorities-and-fairness)."},
		func() float64 { return float64(l.Limit()) }))
}
