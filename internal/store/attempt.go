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

// attemptStateSQL calls webhook_attempt_state_v1 (migration
// 20261128000100): one row whatever is missing, the event's data only when
// the attempt will send; given a lease key (p_lease_key) it also acquires
// the send limits.
const attemptStateSQL = `SELECT * FROM webhook_attempt_state_v1(p_subscription_id => ?, p_event_id => ?, p_attempt => ?`

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

// AttemptState reads what an attempt needs in one snapshot; missing rows are
// reported in the result, never as an error.
func (d Deliveries) AttemptState(ctx context.Context, subscriptionID, eventID uuid.UUID, attempt int) (AttemptState, error) {
	var row attemptStateRow
	err := d.db.NewRaw(attemptStateSQL+")", subscriptionID, eventID, attempt).Scan(ctx, &row)
	if err != nil {
		return AttemptState{}, translate(err, nil)
	}
	return row.state(subscriptionID, eventID, attempt), nil
}

// AttemptStateAcquire is AttemptState that also acquires the send limits
// when the attempt would send; an OK Grant holds a lease to release.
func (d Deliveries) AttemptStateAcquire(ctx context.Context, subscriptionID, eventID uuid.UUID, attempt int, lease SendLease) (AttemptState, error) {
	var row attemptStateRow
	err := d.db.NewRaw(attemptStateSQL+`,
		p_lease_key => ?, p_lease_max => ?, p_lease_duration => make_interval(secs => ?))`,
		subscriptionID, eventID, attempt, lease.Key, lease.MaxInFlight, lease.Duration.Seconds()).Scan(ctx, &row)
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
