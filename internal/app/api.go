package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
)

// APIProcess is a ready-to-run API process.
type APIProcess struct {
	Server   *api.Server
	cfg      config.Config
	store    *store.Store
	temporal client.Client
	listener net.Listener
}

// NewAPI opens the database and Temporal client and binds the listen
// address, so the caller knows the address before Run.
func NewAPI(cfg config.Config, log *slog.Logger) (*APIProcess, error) {
	if err := cfg.RequireDatabase(); err != nil {
		return nil, err
	}
	db, err := store.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	tc, err := TemporalClient(cfg, log)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("temporal client: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		tc.Close()
		db.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	st := store.New(db)
	warnWebhookConfig(cfg, log)
	srv := api.New(api.Deps{Config: cfg, Store: st, Temporal: tc, Log: log})
	return &APIProcess{Server: srv, cfg: cfg, store: st, temporal: tc, listener: ln}, nil
}

// Addr is the bound listen address.
func (p *APIProcess) Addr() string { return p.listener.Addr().String() }

// Run serves until ctx ends, then releases everything.
func (p *APIProcess) Run(ctx context.Context) error {
	defer p.store.DB().Close()
	defer p.temporal.Close()
	bg, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.Server.Run(bg)
	return Serve(ctx, p.listener, p.Server, p.cfg.ShutdownTimeout)
}
