// Package telemetry defines once the metrics that several processes export.
package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Key lifecycle events, the api_key_lifecycle_events_total event label values.
const (
	KeyCreated = "created"
	KeyRotated = "rotated"
	KeyRevoked = "revoked"
	KeyExpired = "expired"
)

// NewKeyLifecycleEvents registers api_key_lifecycle_events_total on reg, the
// counted events at 0 so their rates are defined from the start.
func NewKeyLifecycleEvents(reg prometheus.Registerer, counted ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "api_key_lifecycle_events_total",
		Help: "API key lifecycle events by event: created, rotated, revoked (counted by the API when the change commits), expired (counted by the worker when it applies the expiry).",
	}, []string{"event"})
	for _, e := range counted {
		c.WithLabelValues(e)
	}
	reg.MustRegister(c)
	return c
}
