package app

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
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
	srv := api.New(api.Deps{
		Config:   cfg,
		Store:    res.store,
		Temporal: res.temporal,
		Log:      log,
		Metrics:  metrics,
		Outbox:   store.NewNotifier(res.store.DB(), log),
	})
	return &APIProcess{resources: res, Server: srv, cfg: cfg, log: log}, nil
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
