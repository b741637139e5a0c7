// Package activities holds the service's Temporal activities, as methods on
// one struct carrying their dependencies. Activities do all the I/O; their
// input and result types live here, so workflows import activities.
package activities

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Activities holds the dependencies of every activity (its exported methods).
type Activities struct {
	Store *store.Store
	Log   *slog.Logger
	// Now is the clock; tests may pin it.
	Now func() time.Time

	// WebhookSecrets is nil without WEBHOOK_SECRET_KEY; nil Metrics count nothing.
	WebhookClient  *http.Client
	WebhookSecrets *secret.Box
	Metrics        *Metrics

	// WebhookDisable's zero never disables; Outbox, if set, wakes the relays.
	WebhookDisable store.DisablePolicy
	Outbox         *store.Notifier

	// MaxInFlight defaults to DefaultMaxInFlight.
	MaxInFlight int
	// LocalShare and RegularShare bound a workspace with slow receivers on
	// this worker: its local first attempts, and its regular attempts; nil
	// admits everything.
	LocalShare, RegularShare *WorkspaceShare
	workspaces               subscriptionWorkspaces
	// room sizes the waits of attempts refused a slot by their crowd.
	room waitingRoom

	// Redeliver is bound to the worker's Temporal client (see Redeliverer).
	Redeliver Redeliverer
}

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
