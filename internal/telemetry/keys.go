// Package telemetry holds the metrics that more than one process exports,
// defined once so that every process reports them alike.
package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Key lifecycle events, the values of api_key_lifecycle_events_total's
// event label. The API counts the changes it commits; the worker counts
// expiries, which happen at an instant, not through a request.
const (
	KeyCreated = "created"
	KeyRotated = "rotated"
	KeyRevoked = "revoked"
	KeyExpired = "expired"
)

// NewKeyLifecycleEvents registers api_key_lifecycle_events_total on reg,
// with the events this process counts exported at 0 from the start, so a
// rate over them is defined before the first one happens.
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
