package api

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openlayer-ai/workspace-service/internal/telemetry"
	"github.com/openlayer-ai/workspace-service/models"
)

// Metrics are the API's Prometheus series. Labels hold route templates and
// status codes only, never raw paths or ids, so cardinality stays bounded.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	authFail *prometheus.CounterVec
	events   *prometheus.CounterVec
	keys     *prometheus.CounterVec
	reg      *prometheus.Registry
}

// NewMetrics registers the API's metrics, plus Go and process collectors, on
// reg, the process's registry (the Temporal SDK's series join them there),
// and serves reg at /metrics.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "api_http_requests_total",
			Help: "HTTP requests by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "api_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
		authFail: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "api_auth_failures_total",
			Help: "Rejected credentials by reason.",
		}, []string{"reason"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_events_accepted_total",
			Help: "Events stored (and so promised for delivery) by POST .../events, by event type.",
		}, []string{"type"}),
		keys: telemetry.NewKeyLifecycleEvents(reg, telemetry.KeyCreated, telemetry.KeyRotated, telemetry.KeyRevoked),
	}
	reg.MustRegister(m.requests, m.duration, m.authFail, m.events,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry for scraping.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	method = methodLabel(method)
	m.requests.WithLabelValues(method, route, itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
}

// eventAccepted counts a stored event; the type is from the catalogue,
// so the label stays bounded.
func (m *Metrics) eventAccepted(t models.EventType) {
	if m != nil && t.Valid() {
		m.events.WithLabelValues(string(t)).Inc()
	}
}

// keyEvent counts a committed key change (telemetry.Key*).
func (m *Metrics) keyEvent(event string) {
	if m != nil {
		m.keys.WithLabelValues(event).Inc()
	}
}

// methodLabel bounds the method label: a client may send any token as its
// method, and each would otherwise become a series of its own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	default:
		return "other"
	}
}
