package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/models"
)

// DisablePolicy disables a subscription whose attempts have all failed for
// After, across two or more events spanning MinSpan; zero After never does.
type DisablePolicy struct {
	After   time.Duration
	MinSpan time.Duration
}

// RecordOptions is what an attempt's record changes beside itself.
type RecordOptions struct {
	// Now dates the changes; zero means time.Now().
	Now time.Time
	// Status is the delivery's state after this attempt; empty: by Success.
	Status        models.DeliveryStatus
	NextAttemptAt *time.Time
	// Exhausts says a failure ends the schedule (webhook.delivery.exhausted).
	Exhausts bool
	// Operational says the event is itself webhook.*: it raises no exhausted
	// or recovered event, so failing subscriptions never feed each other.
	Operational bool
	Disable     DisablePolicy
	// Lease is the send lease to give back with the record; nil: none.
	Lease *uuid.UUID
	// Pause holds back sends this long (a receiver's Retry-After); 0: none.
	Pause time.Duration
}

// RecordedAttempt is what RecordAttempt did.
type RecordedAttempt struct {
	// Delivery is the stored record; Wrote is false if an earlier run wrote it.
	Delivery models.WebhookDelivery
	Wrote    bool
	// Emitted lists the operational events stored, in type order; Dispatch
	// says one awaits its delivery workflow, so the relays are worth waking.
	Emitted  []models.EventType
	Dispatch bool
}

// recordAttemptSQL calls webhook_record_attempt_v1 (migration
// 20261128000100), which writes the record, the delivery's state, the
// subscription's health, the operational events due and the lease's
// release in one transaction, step by step in a deletion's lock order.
const recordAttemptSQL = `SELECT record_id, emitted, dispatch FROM webhook_record_attempt_v1(
	p_id => ?, p_subscription_id => ?, p_event_id => ?, p_attempt => ?,
	p_success => ?, p_status_code => ?, p_response_body => ?, p_response_time_ms => ?,
	p_error_message => ?, p_recorded_at => ?,
	p_now => ?, p_status => ?, p_next_attempt_at => ?,
	p_exhausts => ?, p_may_recover => ?,
	p_disable_after => make_interval(secs => ?), p_disable_min_span => make_interval(secs => ?),
	p_lease => ?, p_pause => make_interval(secs => ?))`

// againOnDeadlock runs one statement, and again (up to twice more) when
// PostgreSQL ended it as a deadlock's victim: outside a transaction the
// statement is all that was rolled back, so running it again is safe, and
// failing instead would have the attempt sent to the receiver again.
// webhook_record_attempt_v1's steps take their locks in one order, but
// the previous release's statement took the record counter's slot last,
// so the two can deadlock while both run during a rolling deploy. In a
// transaction the error is returned: the transaction is gone with it.
func againOnDeadlock(db bun.IDB, run func() error) error {
	_, inTx := db.(bun.Tx)
	for try := 0; ; try++ {
		err := run()
		var pgErr pgdriver.Error
		if inTx || try == 2 || !errors.As(err, &pgErr) || pgErr.Field('C') != pgDeadlockDetected {
			return err
		}
	}
}

// RecordAttempt writes the record of one attempt unless one exists for the
// same subscription, event and attempt number, and in the same statement the
// delivery's state (a succeeded one stays succeeded: the receiver has it), the
// subscription's health per opts, the operational events that follow (to the
// workspace's other subscriptions), and the lease and pause even when the
// record existed. A subscription deleted meanwhile is models.ErrNotFound.
func (d Deliveries) RecordAttempt(ctx context.Context, in models.WebhookDelivery, opts RecordOptions) (RecordedAttempt, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = pgTime(now)
	rec := in
	rec.ID = uuid.New()
	rec.DateCreated = pgTime(in.DateCreated)
	if rec.DateCreated.IsZero() {
		rec.DateCreated = now
	}
	status := opts.Status
	if status == "" {
		status = models.DeliveryFailed
		if in.Success {
			status = models.DeliverySucceeded
		}
	}
	var next *time.Time
	if opts.NextAttemptAt != nil {
		t := pgTime(*opts.NextAttemptAt)
		next = &t
	}
	var row struct {
		ID       *uuid.UUID `bun:"record_id"`
		Emitted  []string   `bun:"emitted,array"`
		Dispatch bool       `bun:"dispatch"`
	}
	err := againOnDeadlock(d.db, func() error {
		return d.db.NewRaw(recordAttemptSQL,
			rec.ID, rec.SubscriptionID, rec.EventID, rec.AttemptNumber, rec.Success, rec.StatusCode,
			rec.ResponseBody, rec.ResponseTimeMs, rec.ErrorMessage, rec.DateCreated,
			now, string(status), next,
			opts.Exhausts && !opts.Operational && !in.Success, !opts.Operational,
			opts.Disable.After.Seconds(), opts.Disable.MinSpan.Seconds(),
			opts.Lease, max(opts.Pause, 0).Seconds(),
		).Scan(ctx, &row)
	})
	if err != nil {
		return RecordedAttempt{}, translate(err, nil)
	}
	if row.ID == nil {
		existing, err := d.Find(ctx, in.SubscriptionID, in.EventID, in.AttemptNumber)
		return RecordedAttempt{Delivery: existing}, err
	}
	out := RecordedAttempt{Delivery: rec, Wrote: true, Dispatch: row.Dispatch}
	for _, t := range row.Emitted {
		out.Emitted = append(out.Emitted, models.EventType(t))
	}
	return out, nil
}

// MarkSkipped records an attempt skipped because the subscription is
// disabled: a pending delivery becomes failed, its attempts unchanged.
func (d Deliveries) MarkSkipped(ctx context.Context, subscriptionID, eventID uuid.UUID, now time.Time) error {
	_, err := d.db.NewRaw(`INSERT INTO webhook_delivery_states AS ds (event_id, subscription_id, status, attempts,
			next_attempt_at, event_date_created, date_updated)
		SELECT e.id, s.id, ?::text, 0, NULL::timestamptz, e.date_created, ?::timestamptz
		FROM events e, webhook_subscriptions s WHERE e.id = ? AND s.id = ?
		ON CONFLICT (event_id, subscription_id) DO UPDATE SET status = excluded.status, next_attempt_at = NULL,
			date_updated = excluded.date_updated
		WHERE ds.status = ?`,
		string(models.DeliveryFailed), pgTime(now), eventID, subscriptionID, string(models.DeliveryPending)).Exec(ctx)
	return translate(err, nil)
}
