package store

import (
	"context"
	"time"
)

// Backlog is the event outbox's state at one instant.
type Backlog struct {
	// Undispatched counts undispatched events, saturating at the limit.
	Undispatched int
	// OldestAge is how long the oldest has waited; zero when there is none.
	OldestAge time.Duration
}

// Backlog reads the outbox's size (at most limit) and oldest age from a
// partial index, so its cost follows the backlog, not the events table.
func (e Events) Backlog(ctx context.Context, limit int) (Backlog, error) {
	var row struct {
		N   int
		Age float64
	}
	err := e.db.NewRaw(`SELECT
			(SELECT count(*) FROM (SELECT 1 FROM events WHERE dispatched_at IS NULL LIMIT ?) b) AS n,
			COALESCE((SELECT greatest(0, extract(epoch FROM now() - date_created)) FROM events
				WHERE dispatched_at IS NULL ORDER BY date_created LIMIT 1), 0)::float8 AS age`,
		limit).Scan(ctx, &row)
	if err != nil {
		return Backlog{}, translate(err, nil)
	}
	return Backlog{Undispatched: row.N, OldestAge: time.Duration(row.Age * float64(time.Second))}, nil
}
