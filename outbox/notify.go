package outbox

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// Channel is the PostgreSQL notification channel that wakes the workers'
// dispatchers when events are stored (see Notifier).
const Channel = "event_outbox"

// Notifier wakes the workers' dispatchers after a publish has committed
// its event. It notifies in a statement of its own, outside the event's
// transaction: PostgreSQL serialises the commits of transactions that
// NOTIFY under one cluster-wide lock, held through the commit's WAL flush,
// so a NOTIFY inside every publish would make all publishes commit one at
// a time. A notify-only statement has written nothing before its commit,
// so PostgreSQL commits it without waiting for a WAL flush and holds that
// lock for microseconds. Pokes fold: one notify in flight and at most one pending,
// and the pending one is sent after every poke that came before it, so
// every committed event is covered by a notification sent after its
// commit. A lost notification costs latency only: the dispatchers sweep
// every SweepInterval anyway.
type Notifier struct {
	db     bun.IDB
	log    *slog.Logger
	poke   chan struct{}
	warned atomic.Bool
}

// NewNotifier returns a Notifier on db; Run sends its notifications.
func NewNotifier(db bun.IDB, log *slog.Logger) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{db: db, log: log, poke: make(chan struct{}, 1)}
}

// Poke asks for a notification; it never blocks. A nil Notifier does
// nothing (the sweep alone then starts the workflows).
func (n *Notifier) Poke() {
	if n == nil {
		return
	}
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
		_, err := n.db.ExecContext(ctx, "SELECT pg_notify(?, '')", Channel)
		switch {
		case err != nil && ctx.Err() == nil && !n.warned.Swap(true):
			n.log.Warn("outbox: notifying the workers failed; deliveries start on their 2 s sweep until it works again", slog.Any("error", err))
		case err == nil && n.warned.Swap(false):
			n.log.Info("outbox: notifying the workers works again")
		}
	}
}

// Listen wakes the dispatcher whenever a Notifier notifies: it LISTENs on
// Channel over a dedicated connection (pgdriver reconnects it when it
// breaks) and turns every notification into one pending wake-up, folding
// a burst into one, since a single drain takes everything waiting. A
// notification lost while the connection is down is made good by the
// dispatcher's periodic sweep. The returned channel closes when ctx ends.
func Listen(ctx context.Context, db *bun.DB) <-chan struct{} {
	wake := make(chan struct{}, 1)
	ln := pgdriver.NewListener(db)
	// On error the listener keeps the channel and LISTENs again when it
	// reconnects (on the next Receive); the periodic sweep covers the time
	// until then. A pooler in transaction mode (PgBouncer) would never
	// deliver notifications: workers need a session-level connection.
	_ = ln.Listen(ctx, Channel)
	notes := ln.Channel()
	go func() {
		defer close(wake)
		defer ln.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-notes:
				if !ok {
					return
				}
				select {
				case wake <- struct{}{}:
				default: // a wake-up is already pending
				}
			}
		}
	}()
	return wake
}
