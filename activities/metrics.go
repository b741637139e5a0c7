package activities

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Metrics are the worker's webhook series. Labels take a handful of fixed
// values (outcomes, catalogue event types), never URLs or ids. Counting
// happens in activities, not workflows, so a workflow replay never counts
// twice. A nil *Metrics records nothing (tests).
type Metrics struct {
	attempts      *prometheus.CounterVec
	duration      prometheus.Histogram
	latency       prometheus.Histogram
	retries       prometheus.Counter
	purged        *prometheus.CounterVec
	outboxStarted prometheus.Counter
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
		outboxStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webhook_outbox_started_total",
			Help: "Delivery workflows started by the outbox sweeper (the API could not start them).",
		}),
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
	// The API counts the other key events on the same name; the worker
	// sees expiries, which happen at an instant, not through a request.
	m.keyEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "api_key_lifecycle_events_total",
		Help: "API key lifecycle events by event: created, rotated, revoked (counted by the API when the change commits), expired (counted by the worker when it applies the expiry).",
	}, []string{"event"})
	m.keyEvents.WithLabelValues(keyExpired) // exported at 0 from the start
	m.throttles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webhook_attempts_throttled_total",
		Help: "Attempts held back before sending by their subscription's limits, by reason: in_flight (WEBHOOK_MAX_IN_FLIGHT attempts already in flight), rate (rateLimitPerSecond), paused (a receiver's Retry-After). Each is made again later with the same number.",
	}, []string{"reason"})
	for _, r := range []string{store.ThrottledInFlight, store.ThrottledRate, store.ThrottledPaused} {
		m.throttles.WithLabelValues(r) // exported at 0 from the start
	}
	reg.MustRegister(m.attempts, m.duration, m.latency, m.retries, m.purged, m.outboxStarted, m.undecryptable,
		m.exhausted, m.keyEvents, m.throttles, m.disabled)
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

// keyExpired is the event label of an expiry.
const keyExpired = "expired"

func (m *Metrics) apiKeyExpired() {
	if m != nil {
		m.keyEvents.WithLabelValues(keyExpired).Inc()
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

// OutboxStarted counts workflows the sweeper had to start.
func (m *Metrics) OutboxStarted(n int) {
	if m != nil && n > 0 {
		m.outboxStarted.Add(float64(n))
	}
}
