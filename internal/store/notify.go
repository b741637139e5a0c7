package store

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// OutboxChannel is the PostgreSQL notification channel that wakes the
// workers' outbox relays; a notification's payload names the outbox.
const OutboxChannel = "outbox"

// The outboxes: committed changes that Temporal must hear of.
const (
	OutboxEvents         = "events"          // stored events whose delivery workflow has not started
	OutboxAPIKeys        = "api_keys"        // key changes their APIKey workflow has not heard of
	OutboxWebhookSecrets = "webhook_secrets" // secret rotations their WebhookSecret workflow has not heard of
)

// Outboxes lists them all.
var Outboxes = []string{OutboxEvents, OutboxAPIKeys, OutboxWebhookSecrets}

// Notifier wakes the workers' relays after a change has committed. It
// notifies outside the change's transaction because PostgreSQL commits
// NOTIFYing transactions one at a time under a cluster-wide lock. Pokes fold,
// and a lost notification costs only latency: the relays also sweep.
type Notifier struct {
	db      bun.IDB
	log     *slog.Logger
	poke    chan struct{}
	mu      sync.Mutex
	pending map[string]bool
	warned  atomic.Bool
}

// NewNotifier returns a Notifier on db; Run sends its notifications.
func NewNotifier(db bun.IDB, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{db: db, log: log, poke: make(chan struct{}, 1), pending: map[string]bool{}}
}

// Poke asks for a notification that the outbox has something; it never
// blocks, and a nil Notifier does nothing.
func (n *Notifier) Poke(outbox string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.pending[outbox] = true
	n.mu.Unlock()
	select {
	case n.poke <- struct{}{}:
	default: // one is pending already, and it will be sent after this poke
	}
}

// Run sends the pokes' notifications until ctx ends.
func (n *Notifier) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.poke:
		}
		n.mu.Lock()
		outboxes := n.pending
		n.pending = map[string]bool{}
		n.mu.Unlock()
		for outbox := range outboxes {
			n.notify(ctx, outbox)
		}
	}
}

func (n *Notifier) notify(ctx context.Context, outbox string) {
	_, err := n.db.ExecContext(ctx, "SELECT pg_notify(?, ?)", OutboxChannel, outbox)
	switch {
	case err != nil && ctx.Err() == nil && !n.warned.Swap(true):
		n.log.Warn("outbox: notifying the workers failed; they find changes on their 2 s sweep until it works again", slog.Any("error", err))
	case err == nil && n.warned.Swap(false):
		n.log.Info("outbox: notifying the workers works again")
	}
}
