package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// DisablePolicy is when a failing subscription is disabled automatically
// (WEBHOOK_DISABLE_AFTER, WEBHOOK_DISABLE_MIN_SPAN): every attempt has
// failed for After since the last success, and the failures span at least
// two events, the first failure at least MinSpan before the current one.
// A zero After never disables.
type DisablePolicy struct {
	After   time.Duration
	MinSpan time.Duration
}

// RecordOptions is what an attempt's record changes beside itself: the
// delivery's state, the subscription's health, and the operational events
// that follow from them.
type RecordOptions struct {
	// Now dates the state, the health columns and any event raised. It is
	// the caller's clock, so tests can move it; zero means time.Now().
	Now time.Time
	// Status is the delivery's state after this attempt; empty means
	// succeeded or failed by the record's Success.
	Status models.DeliveryStatus
	// NextAttemptAt dates the next attempt of a pending delivery.
	NextAttemptAt *time.Time
	// Exhausts says a failure of this attempt ends the delivery's
	// schedule (its final scheduled attempt, not a manual one): it raises
	// webhook.delivery.exhausted and owes the subscription a
	// webhook.delivery.recovered at its next success.
	Exhausts bool
	// Operational says the event is itself an operational one (webhook.*):
	// its attempts count for the subscription's health but raise no
	// exhausted or recovered event, so two failing subscriptions never
	// feed each other events.
	Operational bool
	Disable     DisablePolicy
	// Lease is the send lease the attempt held (SendKey), given back with
	// the record so a sent attempt costs no round trip of its own for it;
	// nil holds none.
	Lease *uuid.UUID
	// Pause holds back every send to the subscription for this long from
	// now, by the database's clock (a receiver's Retry-After), unless a
	// pause already runs longer; zero none.
	Pause time.Duration
}

// RecordedAttempt is what RecordAttempt did.
type RecordedAttempt struct {
	// Delivery is the stored record; Wrote is false when an earlier run of
	// the attempt had written it (and then nothing else changed).
	Delivery models.WebhookDelivery
	Wrote    bool
	// Emitted lists the operational events stored with the record, in type
	// order; Dispatch says one of them awaits its delivery workflow (it has
	// recipients), so the outbox dispatchers are worth waking.
	Emitted  []models.EventType
	Dispatch bool
}

// recordAttemptSQL writes an attempt's record, the delivery's state, the
// subscription's health and the operational events due, in one statement:
// one round trip, atomic without a transaction of its own. Every step
// after the record hangs on it (ins): a repeated run of the attempt, whose
// record exists, changes nothing.
//
// The subscription row is written (and locked) only when its health
// changes: a success on a healthy subscription, the usual case, reads it
// and leaves it alone, so concurrent attempts to one receiver never queue
// on it (the record counters are sharded for the same reason). When it
// changes, old takes the row's lock first (FOR NO KEY UPDATE, which the
// records' foreign-key checks never wait for) and reads its latest
// version, which the update then rewrites; concurrent changes queue there
// and each sees the one before.
//
// Lock order. A subscription's deletion locks its row, then (its cascade)
// the state and send-limits rows. So the statement's very first step, lk,
// takes the subscription row FOR KEY SHARE (which concurrent attempts,
// old's FOR NO KEY UPDATE and the API's updates never wait for; only a
// deletion does), and every step that locks a row depends on it: ins
// selects from lk, and old, st and rel read ins. Without lk, the only lock
// on the subscription was the foreign-key checks', which PostgreSQL takes
// after every step has run: a deletion in between deadlocked with the
// state or send-limits row the statement already held. A subscription
// deleted first leaves lk empty, so nothing is written. The release runs
// whether or not the record was new: the lease was held either way.
//
// Arguments: ?0 record id, ?1 subscription, ?2 event, ?3 attempt number,
// ?4 success, ?5 status code, ?6 response body, ?7 response time, ?8 error
// message, ?9 record time, ?10 now, ?11 status, ?12 next attempt at,
// ?13 raises exhausted, ?14 may raise recovered (a regular event's
// success), ?15 disable after (seconds, 0: never), ?16 minimum span
// (seconds), ?17 the send lease to give back (NULL: none), ?18 pause
// (microseconds, 0: none).
var recordAttemptSQL = `WITH lk AS (
	SELECT id FROM webhook_subscriptions WHERE id = ?1 FOR KEY SHARE
), ins AS (
	INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success, status_code,
		response_body, response_time_ms, error_message, date_created)
	SELECT ?0, lk.id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM lk
	ON CONFLICT (subscription_id, event_id, attempt_number) DO NOTHING
	RETURNING id
), old AS (
	SELECT s.id, s.failing_since, s.failing_first_event_id, s.exhausted_since_success, d.disable
	FROM webhook_subscriptions s
	CROSS JOIN LATERAL (SELECT coalesce(NOT ?4 AND s.enabled AND ?15 > 0
		AND s.failing_first_event_id <> ?2
		AND ?10::timestamptz - s.failing_since >= make_interval(secs => ?15)
		AND ?10::timestamptz - s.failing_since >= make_interval(secs => ?16), false) AS disable) d
	WHERE s.id = ?1 AND EXISTS (SELECT 1 FROM ins) AND CASE WHEN ?4
		THEN s.failing_since IS NOT NULL OR (s.exhausted_since_success AND ?14)
		ELSE s.failing_since IS NULL OR ?13 OR d.disable END
	FOR NO KEY UPDATE OF s
), upd AS (
	UPDATE webhook_subscriptions s SET
		failing_since = CASE WHEN ?4 THEN NULL ELSE coalesce(o.failing_since, ?10) END,
		failing_first_event_id = CASE WHEN ?4 THEN NULL
			WHEN o.failing_since IS NULL THEN ?2 ELSE o.failing_first_event_id END,
		exhausted_since_success = CASE WHEN ?4 AND ?14 THEN false ELSE o.exhausted_since_success OR ?13 END,
		enabled = s.enabled AND NOT o.disable,
		disabled_reason = CASE WHEN o.disable THEN 'failing' ELSE s.disabled_reason END,
		disabled_at = CASE WHEN o.disable THEN ?10 ELSE s.disabled_at END,
		date_updated = CASE WHEN o.disable THEN ?10 ELSE s.date_updated END
	FROM old o WHERE s.id = o.id
	RETURNING s.workspace_id, o.disable AS disabled, ?4 AND ?14 AND o.exhausted_since_success AS recovered
), st AS (
	INSERT INTO webhook_delivery_states AS ds (event_id, subscription_id, status, attempts, next_attempt_at,
		last_status_code, event_date_created, date_updated)
	SELECT e.id, ?1::uuid, ?11::text, ?3::int, ?12::timestamptz, ?5::int, e.date_created, ?10::timestamptz
	FROM ins, events e
	WHERE e.id = ?2 AND (SELECT count(*) FROM upd) >= 0
	ON CONFLICT (event_id, subscription_id) DO UPDATE SET
		status = CASE WHEN ds.status = 'succeeded' THEN ds.status ELSE excluded.status END,
		attempts = excluded.attempts,
		next_attempt_at = CASE WHEN ds.status = 'succeeded' THEN NULL ELSE excluded.next_attempt_at END,
		last_status_code = excluded.last_status_code,
		date_updated = excluded.date_updated
	WHERE ds.attempts <= excluded.attempts
), emit AS (
	INSERT INTO events (id, workspace_id, type, data, date_created, recipients, dispatched_at)
	SELECT gen_random_uuid(), x.workspace_id, x.type, x.data, ?10::timestamptz, x.recipients,
		` + dispatchedWhenNoneSQL("x.recipients", "?10::timestamptz") + `
	FROM (SELECT u.workspace_id, t.type, t.data, ` + recipientsSQL("u.workspace_id", "t.type", "?1::uuid") + ` AS recipients
		FROM upd u CROSS JOIN LATERAL (VALUES
			('` + string(models.EventWebhookDeliveryExhausted) + `', ?13, jsonb_build_object('subscriptionId', ?1::uuid, 'eventId', ?2::uuid)),
			('` + string(models.EventWebhookDeliveryRecovered) + `', u.recovered, jsonb_build_object('subscriptionId', ?1::uuid, 'eventId', ?2::uuid)),
			('` + string(models.EventWebhookDisabled) + `', u.disabled, jsonb_build_object('subscriptionId', ?1::uuid, 'reason', '` + string(models.DisabledFailing) + `'))
		) AS t (type, wanted, data) WHERE t.wanted) x
	RETURNING type, dispatched_at
), rel AS (
	UPDATE webhook_send_limits l SET
		leases = ARRAY(SELECT x FROM unnest(l.leases) AS x
			WHERE x.id IS DISTINCT FROM ?17::uuid AND x.held_until > clock_timestamp()),
		paused_until = CASE WHEN ?18 > 0
			THEN greatest(l.paused_until, clock_timestamp() + ?18 * interval '1 microsecond')
			ELSE l.paused_until END
	WHERE l.subscription_id = ?1 AND (?17::uuid IS NOT NULL OR ?18 > 0)
		AND (SELECT count(*) FROM upd) >= 0 AND (SELECT count(*) FROM ins) >= 0
)
SELECT (SELECT id FROM ins) AS id,
	ARRAY(SELECT type FROM emit ORDER BY type) AS emitted,
	EXISTS (SELECT 1 FROM emit WHERE dispatched_at IS NULL) AS dispatch`

// RecordAttempt writes the record of one attempt unless one already exists
// for the same subscription, event and attempt number (an activity that
// ran twice), and with it, in the same statement:
//
//   - the delivery's state (webhook_delivery_states): opts.Status (but a
//     delivery that succeeded stays succeeded: a redelivery that fails
//     after it does not make the receiver's copy go away), the attempts
//     made (never fewer than before), opts.NextAttemptAt and the record's
//     status code;
//   - the subscription's health: a success ends its failing window (and,
//     after an exhausted delivery of a regular event, raises
//     webhook.delivery.recovered once); a failure opens the window if it
//     is not open, and disables the subscription (reason failing, raising
//     webhook.disabled) once the window is opts.Disable.After old and
//     began with another event at least opts.Disable.MinSpan before;
//   - webhook.delivery.exhausted when opts.Exhausts and the attempt failed;
//   - the attempt's send lease given back, and the subscription paused
//     (opts.Lease, opts.Pause), even when the record existed.
//
// Operational events go to the workspace's other enabled subscriptions
// that take them (never the subscription concerned) and carry ids only. A
// subscription deleted meanwhile is models.ErrNotFound.
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
		ID       *uuid.UUID `bun:"id"`
		Emitted  []string   `bun:"emitted,array"`
		Dispatch bool       `bun:"dispatch"`
	}
	err := d.db.NewRaw(recordAttemptSQL,
		rec.ID, rec.SubscriptionID, rec.EventID, rec.AttemptNumber, rec.Success, rec.StatusCode,
		rec.ResponseBody, rec.ResponseTimeMs, rec.ErrorMessage, rec.DateCreated,
		now, string(status), next,
		opts.Exhausts && !opts.Operational && !in.Success, !opts.Operational,
		opts.Disable.After.Seconds(), opts.Disable.MinSpan.Seconds(),
		opts.Lease, max(opts.Pause, 0).Microseconds(),
	).Scan(ctx, &row)
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

// MarkSkipped records that an attempt was not made because the
// subscription is disabled: a pending delivery becomes failed with no next
// attempt, its attempts unchanged (none, when it had no state yet). A
// delivery already succeeded or failed keeps its state, and nothing is
// written when the subscription or the event is gone.
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
