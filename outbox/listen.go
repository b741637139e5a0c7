package outbox

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Wakes holds one wake-up channel per outbox (store.Outboxes).
type Wakes map[string]<-chan struct{}

// Listen wakes the relays whenever a store.Notifier notifies: it LISTENs
// on store.OutboxChannel over a dedicated connection (pgdriver reconnects
// it when it breaks) and turns each notification into one pending wake-up
// of the outbox its payload names, folding a burst into one, since a
// single drain takes everything waiting. A notification lost while the
// connection is down is made good by the relays' periodic sweeps. The
// channels close when ctx ends.
func Listen(ctx context.Context, db *bun.DB) Wakes {
	wakes := make(map[string]chan struct{}, len(store.Outboxes))
	out := make(Wakes, len(store.Outboxes))
	for _, name := range store.Outboxes {
		wakes[name] = make(chan struct{}, 1)
		out[name] = wakes[name]
	}
	ln := pgdriver.NewListener(db)
	// On error the listener keeps the channel and LISTENs again when it
	// reconnects (on the next Receive); the periodic sweep covers the time
	// until then. A pooler in transaction mode (PgBouncer) would never
	// deliver notifications: workers need a session-level connection.
	_ = ln.Listen(ctx, store.OutboxChannel)
	notes := ln.Channel()
	go func() {
		defer func() {
			for _, w := range wakes {
				close(w)
			}
		}()
		defer ln.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case n, ok := <-notes:
				if !ok {
					return
				}
				wake, known := wakes[n.Payload]
				if !known {
					continue
				}
				select {
				case wake <- struct{}{}:
				default: // a wake-up is already pending
				}
			}
		}
	}()
	return out
}
