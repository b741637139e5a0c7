// Package api is the HTTP API under /v1: routing, authentication, the error
// contract and the handlers. Handlers are methods on Server, which holds the
// store, the Temporal client and the logger.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// Deps are what the API needs from its process.
type Deps struct {
	Config   config.Config
	Store    *store.Store
	Temporal client.Client
	Log      *slog.Logger
	Metrics  *Metrics
	// Outbox wakes the workers' relays after a change Temporal must hear
	// of has committed; nil leaves them to their sweep.
	Outbox *store.Notifier
	// Now is the clock; tests may pin it. Defaults to time.Now.
	Now func() time.Time
	// Portal, when set, serves the consumer portal beside the API.
	Portal Portal
}

// Portal adds the consumer portal's pages to the API's router, so they are
// logged, metered (route templates as labels) and recovered from panics
// like the API's requests. admit draws a portal request from the API's rate
// limits: the session stands for an API key, and its workspace's budget is
// the one the workspace's keys share. openRefused and openFailed apply the
// API's throttle of failed authentications per address to the portal's
// links: openRefused before a token is looked up, openFailed after one is
// refused.
type Portal interface {
	Mount(r *mux.Router,
		admit func(r *http.Request, sessionID, workspaceID uuid.UUID) (retryAfter time.Duration, ok bool),
		openRefused func(r *http.Request) (retryAfter time.Duration, refused bool),
		openFailed func(r *http.Request))
}

// Server serves the API.
type Server struct {
	cfg      config.Config
	store    *store.Store
	temporal client.Client
	log      *slog.Logger
	metrics  *Metrics
	now      func() time.Time
	usage    *usageRecorder
	outbox   *store.Notifier
	limits   *limits
	pages    *pageBudget // bounds the memory of GET .../events pages held at once
	handler  http.Handler
	// secrets seals webhook signing secrets; nil without WEBHOOK_SECRET_KEY,
	// when creating webhooks answers 503.
	secrets *secret.Box
	portal  Portal
	// ops does what the API and the portal both do to webhooks.
	ops *webhookops.Ops
}

// New builds the API. Call Run for its background work.
func New(d Deps) *Server {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	s := &Server{
		cfg:      d.Config,
		store:    d.Store,
		temporal: d.Temporal,
		log:      d.Log,
		metrics:  d.Metrics,
		now:      d.Now,
		usage:    newUsageRecorder(d.Store, d.Log),
		limits:   newLimits(d.Config),
		pages:    newPageBudget(eventPageBudgetBytes, eventPageBudgetWait),
		outbox:   d.Outbox,
		portal:   d.Portal,
	}
	if box, err := secret.NewBox(d.Config.WebhookSecretKeys...); err == nil {
		s.secrets = box
	} else {
		d.Log.Warn("WEBHOOK_SECRET_KEY is not set or unusable: POST .../webhooks answers 503 webhook_secrets_unavailable until it is (openssl rand -base64 32)",
			slog.Any("error", err))
	}
	s.ops = &webhookops.Ops{Config: d.Config, Store: d.Store, Temporal: d.Temporal, Secrets: s.secrets, Log: d.Log}
	s.handler = s.observe(s.routes())
	return s
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Run does the API's background work (recording key usage, notifying the
// workers of published events) until ctx ends.
func (s *Server) Run(ctx context.Context) {
	if s.outbox != nil {
		go s.outbox.Run(ctx)
	}
	s.usage.run(ctx)
}
