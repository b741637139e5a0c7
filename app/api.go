package app

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/portal"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// APIProcess is a ready-to-run API process.
type APIProcess struct {
	resources
	Server *api.Server
	cfg    config.Config
	log    *slog.Logger
}

// NewAPI opens the database and Temporal client and binds the listen address
// (known before Run); one registry holds the API's and Temporal's series.
func NewAPI(cfg config.Config, log *slog.Logger) (*APIProcess, error) {
	reg := prometheus.NewRegistry()
	metrics := api.NewMetrics(reg)
	res, err := open(cfg, log, cfg.HTTPAddr, reg)
	if err != nil {
		return nil, err
	}
	outbox := store.NewNotifier(res.store.DB(), log)
	srv := api.New(api.Deps{
		Config:   cfg,
		Store:    res.store,
		Temporal: res.temporal,
		Log:      log,
		Metrics:  metrics,
		Outbox:   outbox,
		Portal:   newPortal(cfg, res, outbox, log),
	})
	return &APIProcess{resources: res, Server: srv, cfg: cfg, log: log}, nil
}

// newPortal builds the consumer portal the API serves under /portal/; its
// webhook actions use the same rules and key ring as the API's.
func newPortal(cfg config.Config, res resources, outbox *store.Notifier, log *slog.Logger) *portal.Portal {
	box, err := secret.NewBox(cfg.WebhookSecretKeys...)
	if err != nil {
		box = nil // the API logs it; creating and rotating answer 503
	}
	ops := &webhookops.Ops{Config: cfg, Store: res.store, Temporal: res.temporal, Secrets: box, Log: log}
	return portal.New(portal.Deps{Config: cfg, Store: res.store, Ops: ops, Outbox: outbox, Log: log})
}

// Run serves until ctx ends, then releases everything.
func (p *APIProcess) Run(ctx context.Context) error {
	defer p.close()
	bg, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.Server.Run(bg)
	serveDebug(bg, p.cfg.DebugAddr, p.log)
	return Serve(ctx, p.listener, p.Server, p.cfg.ShutdownTimeout)
}
