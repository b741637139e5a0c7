package outbox

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// NewSentCounter registers outbox_sent_total, by outbox, on reg.
func NewSentCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "outbox_sent_total",
		Help: "Committed changes the worker's outbox relays told Temporal of, by outbox (events: delivery workflows started; api_keys, webhook_secrets: lifecycle workflows signalled).",
	}, []string{"outbox"})
	for _, name := range store.Outboxes {
		c.WithLabelValues(name) // exported at 0 from the start
	}
	reg.MustRegister(c)
	return c
}
