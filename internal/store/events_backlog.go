package store

import (
	"context"
	"time"
)

// Backlog is the event outbox's state at one instant.
type Backlog struct {
	// Undispatched counts events whose delivery workflow is not started,
	// up to the limit Backlog was given (it saturates there).
	Undispatched int
	// OldestAge is how long the oldest of them has waited, by the
	// database's clock; zero when there is none.
	OldestAge time.Duration
}

// Backlog reads the outbox's size, counting at most limit rows, and the
// age of its oldest event, in one statement that reads only the partial
// index events_undispatched_idx (date_created WHERE dispatched_at IS NULL):
// its cost follows the backlog, never the events table. date_created
// comes from the API host's clock, so a skewed host shifts the age by its
// skew; it is never negative.
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
