package outbox

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// Channel is the PostgreSQL notification channel the events table's
// trigger (migration …070) notifies when events are stored.
const Channel = "event_outbox"

// Listen wakes the dispatcher whenever events are stored: it LISTENs on
// Channel over a dedicated connection (pgdriver reconnects it when it
// breaks) and turns every notification into one pending wake-up, folding
// a burst into one, since a single drain takes everything waiting. A
// notification lost while the connection is down is made good by the
// dispatcher's periodic sweep. The returned channel closes when ctx ends.
func Listen(ctx context.Context, db *bun.DB) <-chan struct{} {
	wake := make(chan struct{}, 1)
	ln := pgdriver.NewListener(db)
	if err := ln.Listen(ctx, Channel); err != nil {
		// The connection is retried on the first Receive; the periodic
		// sweep covers the time until then.
		_ = err
	}
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
