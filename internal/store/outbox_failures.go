package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// SendFailure is an outbox row whose send failed for the row itself: how
// many of its sends have failed, and when it may be claimed again.
type SendFailure struct {
	ID       uuid.UUID
	Failures int
	RetryAt  time.Time
}

// A row whose send failed waits RetryFirst after its first failure, twice as
// long after each next one, at most RetryMax: a row that fails once goes
// again within seconds, one that always fails costs a claim every few
// minutes instead of one every sweep.
const (
	RetryFirst = time.Second
	RetryMax   = 5 * time.Minute
)

// releaseFailed gives back the leased row id of table after a failed send:
// it counts the failure in <prefix>_failures and holds the row back by
// leasing it to nobody until its retry time (<prefix>_claimed_until), which
// every claim already respects, so the claims and their indexes need nothing
// more. cond narrows the rows written (a dispatched event is done). A row
// gone or done meanwhile has nothing to hold back: zero failures, no error.
func releaseFailed(ctx context.Context, db bun.IDB, table, prefix, cond string, id uuid.UUID) (SendFailure, error) {
	failures, until := prefix+"_failures", prefix+"_claimed_until"
	f := SendFailure{ID: id}
	// SET reads the count before this failure: 2^0 s after the first.
	err := db.QueryRowContext(ctx, `UPDATE `+table+` SET `+failures+` = `+failures+` + 1,
			`+until+` = now() + make_interval(secs => least(? * power(2, least(`+failures+`, 20)), ?))
		WHERE id = ?`+cond+`
		RETURNING `+failures+`, `+until,
		RetryFirst.Seconds(), RetryMax.Seconds(), id).Scan(&f.Failures, &f.RetryAt)
	if errors.Is(err, sql.ErrNoRows) {
		return f, nil
	}
	return f, translate(err, nil)
}
