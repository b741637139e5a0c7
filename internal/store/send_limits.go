package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// SendLimits holds each subscription's throttling state; the database decides
// under the row lock and by its own clock, so replicas never disagree.
type SendLimits struct{ db bun.IDB }

// SendLimits returns the throttling queries.
func (s *Store) SendLimits() SendLimits { return SendLimits{db: s.db} }

// Reasons an acquire is refused (webhook_attempts_throttled_total labels).
const (
	ThrottledPaused   = "paused"    // a receiver's Retry-After
	ThrottledRate     = "rate"      // rate_limit_per_second
	ThrottledInFlight = "in_flight" // as many attempts in flight as allowed
)

// SendGrant is an acquire's answer: OK, or the reason and how long to wait
// (exact for Rate, whose lease is reserved; an upper bound for InFlight).
type SendGrant struct {
	OK     bool
	Reason string
	Wait   time.Duration
}

// SendLease is what an attempt asks for; Duration outlasts an attempt, yet
// frees a crashed worker's slot soon.
type SendLease struct {
	Key         uuid.UUID
	MaxInFlight int
	Duration    time.Duration
}

// sendKeySpace namespaces SendKey's UUIDs.
var sendKeySpace = uuid.MustParse("6f0b7d0e-4c59-4a57-9f7e-2d0f5e3a9c11")

// SendKey names one attempt among its subscription's leases. It is the same
// on every run, so a retry finds the lease an earlier run took.
func SendKey(eventID uuid.UUID, attempt int) uuid.UUID {
	b := make([]byte, 0, 24)
	b = append(b, eventID[:]...)
	b = append(b, byte(attempt>>56), byte(attempt>>48), byte(attempt>>40), byte(attempt>>32),
		byte(attempt>>24), byte(attempt>>16), byte(attempt>>8), byte(attempt))
	return uuid.NewSHA1(sendKeySpace, b)
}

type sendGrantRow struct {
	OK     bool    `bun:"ok"`
	Reason *string `bun:"reason"`
	WaitUs *int64  `bun:"wait_us"`
}

func (r sendGrantRow) grant() SendGrant {
	g := SendGrant{OK: r.OK}
	if r.Reason != nil {
		g.Reason = *r.Reason
	}
	if r.WaitUs != nil && *r.WaitUs > 0 {
		g.Wait = time.Duration(*r.WaitUs) * time.Microsecond
	}
	return g
}

// Acquire asks whether the attempt may send now to subscriptionID. A deleted
// subscription is models.ErrNotFound.
func (l SendLimits) Acquire(ctx context.Context, subscriptionID uuid.UUID, lease SendLease) (SendGrant, error) {
	var row sendGrantRow
	err := l.db.NewRaw(`SELECT ok, reason, wait_us FROM webhook_send_acquire(?, ?, ?, ? * interval '1 microsecond')`,
		subscriptionID, lease.Key, lease.MaxInFlight, lease.Duration.Microseconds()).Scan(ctx, &row)
	if err != nil {
		return SendGrant{}, translate(err, nil)
	}
	return row.grant(), nil
}

// Release gives back the attempt's lease (and drops expired ones).
func (l SendLimits) Release(ctx context.Context, subscriptionID, key uuid.UUID) error {
	_, err := l.db.NewRaw(`UPDATE webhook_send_limits
		SET leases = ARRAY(SELECT x FROM unnest(leases) AS x WHERE x.id <> ? AND x.held_until > clock_timestamp())
		WHERE subscription_id = ?`, key, subscriptionID).Exec(ctx)
	return translate(err, nil)
}
