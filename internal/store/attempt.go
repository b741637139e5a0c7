package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// AttemptState is what a delivery attempt reads before it sends.
type AttemptState struct {
	// Existing is this attempt's record if a run already wrote it.
	Existing *models.WebhookDelivery
	// Target is the subscription; TargetFound is false when it is deleted.
	Target      models.WebhookTarget
	TargetFound bool
	// Event carries data only when the attempt will send.
	Event      models.Event
	EventFound bool
	// Grant is AttemptStateAcquire's answer when the attempt would send.
	Grant *SendGrant
}

// attemptStateSQL returns exactly one row whatever is missing (the one-row
// VALUES), and leaves the event's data out when nothing will be sent.
const attemptStateSQL = `SELECT
	s.id AS s_id, s.workspace_id AS s_workspace_id, s.url AS s_url, s.enabled AS s_enabled, s.secret_ciphertext AS s_secret,
	CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_ciphertext END AS s_previous_secret,
	CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_expires_at END AS s_previous_expires_at,
	s.rate_limit_per_second AS s_rate_limit, s.headers AS s_headers,
	e.id AS e_id, e.workspace_id AS e_workspace_id, e.type AS e_type, e.date_created AS e_date_created,
	CASE WHEN d.id IS NULL AND s.enabled THEN e.data END AS e_data,
	d.id AS d_id, d.success AS d_success, d.status_code AS d_status_code, d.response_body AS d_response_body,
	d.response_time_ms AS d_response_time_ms, d.error_message AS d_error_message, d.date_created AS d_date_created
FROM (VALUES (1)) AS one (x)
LEFT JOIN webhook_subscriptions s ON s.id = ?
LEFT JOIN events e ON e.id = ?
LEFT JOIN webhook_deliveries d ON d.subscription_id = ? AND d.event_id = ? AND d.attempt_number = ?`

type attemptStateRow struct {
	SID          *uuid.UUID    `bun:"s_id"`
	SWorkspaceID *uuid.UUID    `bun:"s_workspace_id"`
	SURL         *string       `bun:"s_url"`
	SEnabled     *bool         `bun:"s_enabled"`
	SSecret      []byte        `bun:"s_secret"`
	SPrevSecret  []byte        `bun:"s_previous_secret"`
	SPrevExpires *time.Time    `bun:"s_previous_expires_at"`
	SRateLimit   *int          `bun:"s_rate_limit"`
	SHeaders     storedHeaders `bun:"s_headers"`

	EID          *uuid.UUID `bun:"e_id"`
	EWorkspaceID *uuid.UUID `bun:"e_workspace_id"`
	EType        *string    `bun:"e_type"`
	EDateCreated *time.Time `bun:"e_date_created"`
	EData        []byte     `bun:"e_data"`

	DID             *uuid.UUID `bun:"d_id"`
	DSuccess        *bool      `bun:"d_success"`
	DStatusCode     *int       `bun:"d_status_code"`
	DResponseBody   *string    `bun:"d_response_body"`
	DResponseTimeMs *int       `bun:"d_response_time_ms"`
	DErrorMessage   *string    `bun:"d_error_message"`
	DDateCreated    *time.Time `bun:"d_date_created"`

	// Only AttemptStateAcquire's statement sets these.
	GOK     *bool   `bun:"g_ok"`
	GReason *string `bun:"g_reason"`
	GWaitUs *int64  `bun:"g_wait_us"`
}

// attemptStateAcquireSQL: OFFSET 0 keeps the sub-select whole, so (g).* reads
// webhook_send_acquire's one result rather than calling it once per column.
const attemptStateAcquireSQL = `SELECT st.*, a.ok AS g_ok, a.reason AS g_reason, a.wait_us AS g_wait_us
FROM (` + attemptStateSQL + `) AS st
LEFT JOIN LATERAL (SELECT (x.g).* FROM (
	SELECT webhook_send_acquire(st.s_id, ?, ?, ? * interval '1 microsecond') AS g
	WHERE st.d_id IS NULL AND st.s_enabled AND st.e_id IS NOT NULL OFFSET 0) AS x) AS a ON true`

// attemptStateAcquirePrepared is attemptStateAcquireSQL prepared: the
// subscription, the event, again both for the record, the attempt number,
// then webhook_send_acquire's lease key, bound and duration (µs).
var attemptStateAcquirePrepared = numbered(attemptStateAcquireSQL,
	[]string{"uuid", "uuid", "uuid", "uuid", "int", "uuid", "int", "float8"})

// AttemptState reads what an attempt needs in one snapshot; missing rows are
// reported in the result, never as an error.
func (d Deliveries) AttemptState(ctx context.Context, subscriptionID, eventID uuid.UUID, attempt int) (AttemptState, error) {
	var row attemptStateRow
	err := d.db.NewRaw(attemptStateSQL, subscriptionID, eventID, subscriptionID, eventID, attempt).Scan(ctx, &row)
	if err != nil {
		return AttemptState{}, translate(err, nil)
	}
	return row.state(subscriptionID, eventID, attempt), nil
}

// AttemptStateAcquire is AttemptState that also acquires the send limits
// when the attempt would send; an OK Grant holds a lease to release.
func (d Deliveries) AttemptStateAcquire(ctx context.Context, subscriptionID, eventID uuid.UUID, attempt int, lease SendLease) (AttemptState, error) {
	var row attemptStateRow
	err := d.prep.scanRow(ctx, d.db, &row, attemptStateAcquirePrepared, subscriptionID, eventID, subscriptionID, eventID, attempt,
		lease.Key, lease.MaxInFlight, lease.Duration.Microseconds())
	if err != nil {
		return AttemptState{}, translate(err, nil)
	}
	st := row.state(subscriptionID, eventID, attempt)
	if row.GOK != nil {
		st.Grant = new(sendGrantRow{OK: *row.GOK, Reason: row.GReason, WaitUs: row.GWaitUs}.grant())
	}
	return st, nil
}

func (row attemptStateRow) state(subscriptionID, eventID uuid.UUID, attempt int) AttemptState {
	var st AttemptState
	if row.DID != nil {
		st.Existing = &models.WebhookDelivery{
			ID: *row.DID, SubscriptionID: subscriptionID, EventID: eventID, AttemptNumber: attempt,
			Success: *row.DSuccess, StatusCode: row.DStatusCode, ResponseBody: *row.DResponseBody,
			ResponseTimeMs: *row.DResponseTimeMs, ErrorMessage: row.DErrorMessage, DateCreated: *row.DDateCreated,
		}
	}
	if row.SID != nil {
		st.TargetFound = true
		st.Target = models.WebhookTarget{
			ID: *row.SID, WorkspaceID: *row.SWorkspaceID, URL: *row.SURL, Enabled: *row.SEnabled, SecretCiphertext: row.SSecret,
			// Set only while valid by the database's clock, cleared or not.
			PreviousSecretCiphertext: row.SPrevSecret, PreviousSecretExpiresAt: row.SPrevExpires,
			RateLimitPerSecond: row.SRateLimit, Headers: row.SHeaders.headers(),
		}
	}
	if row.EID != nil {
		st.EventFound = true
		st.Event = models.Event{
			ID: *row.EID, WorkspaceID: *row.EWorkspaceID, Type: models.EventType(*row.EType),
			DateCreated: *row.EDateCreated, Data: json.RawMessage(row.EData),
		}
	}
	return st
}
