// Package activities holds every Temporal activity of the service as methods
// on one struct that carries their dependencies. Activities do all the I/O
// (database, HTTP); workflows only orchestrate them. Input and result types
// live here too, so workflows import activities and never the reverse.
package activities

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Activities is registered once with the worker; its exported methods are
// the activities.
type Activities struct {
	Store *store.Store
	Log   *slog.Logger
	// Now is the clock; tests may pin it. Defaults to time.Now.
	Now func() time.Time

	// Webhook delivery (attempt.go): the outbound HTTP client
	// (NewWebhookClient), the box that opens signing secrets (nil when
	// WEBHOOK_SECRET_KEY is unset) and the worker's metrics (nil records
	// nothing).
	WebhookClient  *http.Client
	WebhookSecrets *secret.Box
	Metrics        *Metrics

	// WebhookDisable is when a failing subscription is disabled
	// (WEBHOOK_DISABLE_AFTER, WEBHOOK_DISABLE_MIN_SPAN); zero never
	// disables. Outbox wakes the relays after an attempt stored an
	// operational event with recipients (nil: their 2 s sweep starts it).
	WebhookDisable store.DisablePolicy
	Outbox         *store.Notifier

	// MaxInFlight caps one subscription's attempts in flight across every
	// replica (WEBHOOK_MAX_IN_FLIGHT; zero means DefaultMaxInFlight).
	MaxInFlight int

	// Redeliver asks an event's delivery workflow for one more attempt
	// (recover.go); the wiring binds it to the worker's Temporal client.
	Redeliver Redeliverer
}

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
