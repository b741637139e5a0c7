package outbox

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Wakes holds one wake-up channel per outbox (store.Outboxes).
type Wakes map[string]<-chan struct{}

// Listen turns each notification on store.OutboxChannel into one pending
// wake-up of the outbox it names; the channels close when ctx ends.
func Listen(ctx context.Context, db *bun.DB) Wakes {
	wakes := make(map[string]chan struct{}, len(store.Outboxes))
	out := make(Wakes, len(store.Outboxes))
	for _, name := range store.Outboxes {
		wakes[name] = make(chan struct{}, 1)
		out[name] = wakes[name]
	}
	ln := pgdriver.NewListener(db)
	// A failed LISTEN is retried on reconnect. Transaction-mode poolers
	// (PgBouncer) never deliver notifications.
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
				// A notification naming no known outbox (one sent by hand)
				// wakes every relay.
				for name, wake := range wakes {
					if name != n.Payload && wakes[n.Payload] != nil {
						continue
					}
					select {
					case wake <- struct{}{}:
					default: // a wake-up is already pending
					}
				}
			}
		}
	}()
	return out
}
