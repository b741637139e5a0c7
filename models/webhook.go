package models

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Webhook limits from the interface description.
const (
	WebhookURLMax         = 2048
	WebhookDescriptionMax = 500
	// DeliveryResponseBodyMax is how much of a receiver's answer is kept.
	DeliveryResponseBodyMax = 1024
)

// WebhookSubscription is a subscription as the API returns it. The signing
// secret is deliberately not a member: it is shown once, at creation.
type WebhookSubscription struct {
	ID          uuid.UUID   `json:"id"`
	WorkspaceID uuid.UUID   `json:"workspaceId"`
	URL         string      `json:"url"`
	Description string      `json:"description"`
	EventTypes  []EventType `json:"eventTypes"`
	Enabled     bool        `json:"enabled"`
	// DisabledReason says why the service disabled the subscription
	// (DisabledFailing), with DisabledAt; both null otherwise, and cleared
	// when it is enabled again.
	DisabledReason *DisabledReason `json:"disabledReason"`
	DisabledAt     *time.Time      `json:"disabledAt"`
	// RateLimitPerSecond caps deliveries to the URL across every worker
	// replica; null means unlimited.
	RateLimitPerSecond *int `json:"rateLimitPerSecond"`
	// CreatorID is null once the creating user has been removed.
	CreatorID   *uuid.UUID `json:"creatorId"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
}

// DisabledReason says why the service disabled a subscription.
type DisabledReason string

// DisabledFailing: every attempt failed for the configured window (see
// config WEBHOOK_DISABLE_AFTER).
const DisabledFailing DisabledReason = "failing"

// RateLimitPerSecondMax bounds rateLimitPerSecond (the column's CHECK).
const RateLimitPerSecondMax = 10000

// WebhookCreated is the creation result: the only response carrying the secret.
type WebhookCreated struct {
	ID     uuid.UUID `json:"id"`
	Secret string    `json:"secret"`
}

// NewWebhook is a validated request to create a subscription.
type NewWebhook struct {
	WorkspaceID        uuid.UUID
	CreatorID          uuid.UUID
	URL                string
	Description        string
	EventTypes         []EventType
	Enabled            bool
	RateLimitPerSecond *int
}

// WebhookUpdate is a validated partial update; nil members stay unchanged.
type WebhookUpdate struct {
	URL         *string
	Description *string
	EventTypes  []EventType
	Enabled     *bool
	// RateLimitPerSecond: Set with a nil Value clears the limit.
	RateLimitPerSecond OptionalInt
}

// OptionalInt is a nullable integer member of a partial update: Set says it
// was sent, Value is nil for null.
type OptionalInt struct {
	Set   bool
	Value *int
}

// WebhookTarget is what a delivery attempt needs to know about a
// subscription: where to send, whether it may, and the sealed secret.
type WebhookTarget struct {
	ID               uuid.UUID
	WorkspaceID      uuid.UUID
	URL              string
	Enabled          bool
	SecretCiphertext []byte
	// PreviousSecretCiphertext is the secret a rotation replaced, which
	// deliveries also sign with until PreviousSecretExpiresAt (nil: none).
	PreviousSecretCiphertext []byte
	PreviousSecretExpiresAt  *time.Time
	// RateLimitPerSecond: nil is unlimited.
	RateLimitPerSecond *int
}

// WebhookDelivery is the record of one delivery attempt, as the API returns
// it. StatusCode is nil when no response came; ErrorMessage is nil on success.
type WebhookDelivery struct {
	ID             uuid.UUID `json:"id"`
	EventID        uuid.UUID `json:"eventId"`
	AttemptNumber  int       `json:"attemptNumber"`
	Success        bool      `json:"success"`
	StatusCode     *int      `json:"statusCode"`
	ResponseBody   string    `json:"responseBody"`
	ResponseTimeMs int       `json:"responseTimeMs"`
	ErrorMessage   *string   `json:"errorMessage"`
	DateCreated    time.Time `json:"dateCreated"`

	SubscriptionID uuid.UUID `json:"-"`
}

// DeliveryStatus is where one event's delivery to one subscription stands.
type DeliveryStatus string

// Delivery statuses, as the API shows them.
const (
	DeliveryPending   DeliveryStatus = "pending"   // another attempt is due (nextAttemptAt), or none made yet
	DeliverySucceeded DeliveryStatus = "succeeded" // an attempt got a 2xx
	DeliveryFailed    DeliveryStatus = "failed"    // no attempt is scheduled and none succeeded (exhausted, 410, or skipped)
)

// EventRecipient is one recipient's delivery of an event.
type EventRecipient struct {
	SubscriptionID uuid.UUID      `json:"subscriptionId"`
	Status         DeliveryStatus `json:"status"`
	Attempts       int            `json:"attempts"`
	NextAttemptAt  *time.Time     `json:"nextAttemptAt"`
	StatusCode     *int           `json:"statusCode"`
}

// EventDetail is an event with its recipients' delivery status, as
// GET .../events/{eventId} returns it (the list omits Recipients).
type EventDetail struct {
	ID          uuid.UUID        `json:"id"`
	Type        EventType        `json:"type"`
	Data        json.RawMessage  `json:"data"`
	DateCreated time.Time        `json:"dateCreated"`
	Recipients  []EventRecipient `json:"recipients,omitempty"`
}
