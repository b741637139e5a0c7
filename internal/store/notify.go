package store

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// OutboxChannel is the PostgreSQL notification channel that wakes the
// workers' outbox relays when a change Temporal must hear of has committed
// (see Notifier). A notification's payload names the outbox.
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
// notifies in a statement of its own, outside the change's transaction: PostgreSQL serialises the commits of transactions that
// NOTIFY under one cluster-wide lock, held through the commit's WAL flush,
// so a NOTIFY inside every publish would make all publishes commit one at
// a time. A notify-only statement has written nothing before its commit,
// so PostgreSQL commits it without waiting for a WAL flush and holds that
// lock for microseconds. Pokes fold: one notify in flight and at most one
// pending per outbox, and the pending one is sent after every poke that
// came before it, so every committed change is covered by a notification
// sent after its commit. A lost notification costs latency only: the
// relays sweep every couple of seconds anyway.
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
// blocks. A nil Notifier does nothing (the relays' sweeps then find it).
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
