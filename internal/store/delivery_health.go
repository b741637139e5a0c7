package store

import (
	"context"
	"time"

	"github.com/google/uuid"

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

// recordAttemptSQL writes an attempt's record, the delivery's state, the
// subscription's health and the operational events due in one atomic
// statement. Every step hangs on the record (ins), so a repeated run changes
// nothing; the lease release (rel) runs either way. The subscription row is
// written only when its health changes, so successes never queue on it. Locks
// follow a deletion's order: lk takes the subscription FOR KEY SHARE (only a
// deletion waits for it) before any step locks a state or send-limits row.
// Arguments: ?0 record id, ?1 subscription, ?2 event, ?3 attempt number,
// ?4 success, ?5 status code, ?6 response body, ?7 response time, ?8 error,
// ?9 record time, ?10 now, ?11 status, ?12 next attempt at, ?13 raises
// exhausted, ?14 may raise recovered, ?15 disable after (s), ?16 minimum
// span (s), ?17 send lease (NULL: none), ?18 pause (µs).
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

// recordAttemptPrepared is recordAttemptSQL prepared, its arguments typed
// in order (see recordAttemptSQL).
var recordAttemptPrepared = numbered(recordAttemptSQL, []string{
	"uuid", "uuid", "uuid", "int", "bool", "int", "text", "int", "text", "timestamptz",
	"timestamptz", "text", "timestamptz", "bool", "bool", "float8", "float8", "uuid", "float8"})

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
		ID       *uuid.UUID `bun:"id"`
		Emitted  []string   `bun:"emitted,array"`
		Dispatch bool       `bun:"dispatch"`
	}
	err := d.prep.scanRow(ctx, d.db, &row, recordAttemptPrepared,
		rec.ID, rec.SubscriptionID, rec.EventID, rec.AttemptNumber, rec.Success, rec.StatusCode,
		rec.ResponseBody, rec.ResponseTimeMs, rec.ErrorMessage, rec.DateCreated,
		now, string(status), next,
		opts.Exhausts && !opts.Operational && !in.Success, !opts.Operational,
		opts.Disable.After.Seconds(), opts.Disable.MinSpan.Seconds(),
		opts.Lease, max(opts.Pause, 0).Microseconds(),
	)
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
