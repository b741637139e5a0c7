package activities

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/telemetry"
)

// Metrics are the worker's webhook series, labelled by a few fixed values,
// never URLs or ids. Activities count, not workflows, so a replay never
// counts twice. A nil *Metrics records nothing.
type Metrics struct {
	attempts      *prometheus.CounterVec
	duration      prometheus.Histogram
	latency       prometheus.Histogram
	retries       prometheus.Counter
	purged        *prometheus.CounterVec
	undecryptable prometheus.Counter
	exhausted     prometheus.Counter
	keyEvents     *prometheus.CounterVec
	throttles     *prometheus.CounterVec
	disabled      prometheus.Counter
}

// NewMetrics registers the webhook series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_delivery_attempts_total",
			Help: "Delivery attempts by outcome: success, http_error, gone, redirect, timeout, connection_error, tls_error, blocked, dns_error.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "webhook_delivery_attempt_duration_seconds",
			Help:    "Duration of one delivery attempt, connect to response body.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20},
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "webhook_delivery_latency_seconds",
			Help:    "From an event accepted to its first successful delivery, per subscription (retries included).",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200},
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_delivery_retries_scheduled_total",
			Help: "Failed attempts after which another attempt is scheduled.",
		}),
		purged: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_retention_deleted_total",
			Help: "Rows deleted by retention, by kind (delivery, event, idempotency_key, previous_webhook_secret: an expired signing secret erased from its subscription).",
		}, []string{"kind"}),
		undecryptable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_secret_undecryptable_total",
			Help: "Attempts held back (and retried) because no key of this worker's WEBHOOK_SECRET_KEY opens the subscription's signing secret.",
		}),
		exhausted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_deliveries_exhausted_total",
			Help: "Deliveries (one event to one subscription) whose every scheduled attempt failed: counted when the final attempt's failure is recorded.",
		}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_subscriptions_disabled_total",
			Help: "Subscriptions disabled automatically (disabledReason failing): every attempt failed for WEBHOOK_DISABLE_AFTER. Counted by the attempt that disabled one.",
		}),
	}
	m.keyEvents = telemetry.NewKeyLifecycleEvents(reg, telemetry.KeyExpired)
	m.throttles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webhook_attempts_throttled_total",
		Help: "Attempts held back before sending by their subscription's limits, by reason: in_flight (WEBHOOK_MAX_IN_FLIGHT attempts already in flight), rate (rateLimitPerSecond), paused (a receiver's Retry-After), workspace_share (its workspace holds its share of this worker's slots, an eighth when its receivers are slow; a first attempt then goes from the workflow task to a regular activity at once, and so does one to a slow subscription once its limits admit it). Each is made again later with the same number.",
	}, []string{"reason"})
	for _, r := range []string{store.ThrottledInFlight, store.ThrottledRate, store.ThrottledPaused, ThrottledWorkspaceShare} {
		m.throttles.WithLabelValues(r) // exported at 0 from the start
	}
	reg.MustRegister(m.attempts, m.duration, m.latency, m.retries, m.purged, m.undecryptable,
		m.exhausted, m.throttles, m.disabled)
	return m
}

func (m *Metrics) attempt(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.attempts.WithLabelValues(outcome).Inc()
	m.duration.Observe(d.Seconds())
}

func (m *Metrics) delivered(sinceAccepted time.Duration) {
	if m != nil {
		m.latency.Observe(sinceAccepted.Seconds())
	}
}

func (m *Metrics) retryScheduled() {
	if m != nil {
		m.retries.Inc()
	}
}

func (m *Metrics) deleted(kind string, n int) {
	if m != nil && n > 0 {
		m.purged.WithLabelValues(kind).Add(float64(n))
	}
}

func (m *Metrics) deliveryExhausted() {
	if m != nil {
		m.exhausted.Inc()
	}
}

func (m *Metrics) subscriptionDisabled() {
	if m != nil {
		m.disabled.Inc()
	}
}

func (m *Metrics) apiKeyExpired() {
	if m != nil {
		m.keyEvents.WithLabelValues(telemetry.KeyExpired).Inc()
	}
}

func (m *Metrics) throttled(reason string) {
	if m != nil {
		m.throttles.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) undecryptableSecret() {
	if m != nil {
		m.undecryptable.Inc()
	}
}
