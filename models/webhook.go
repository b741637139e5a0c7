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

	DeliveryResponseBodyMax = 1024
)

// WebhookSubscription is a subscription as the API returns it, never its secret.
type WebhookSubscription struct {
	ID          uuid.UUID   `json:"id"`
	WorkspaceID uuid.UUID   `json:"workspaceId"`
	URL         string      `json:"url"`
	Description string      `json:"description"`
	EventTypes  []EventType `json:"eventTypes"`
	Enabled     bool        `json:"enabled"`

	DisabledReason *DisabledReason `json:"disabledReason"`
	DisabledAt     *time.Time      `json:"disabledAt"`
	// RateLimitPerSecond caps deliveries across all replicas; null: unlimited.
	RateLimitPerSecond *int `json:"rateLimitPerSecond"`
	// Headers are sent on every attempt; sensitive values show as the mask.
	Headers          map[string]string `json:"headers"`
	SensitiveHeaders []string          `json:"sensitiveHeaders"`
	// SignatureScheme is fixed at creation (v1 unless asked).
	SignatureScheme SignatureScheme `json:"signatureScheme"`

	CreatorID   *uuid.UUID `json:"creatorId"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
}

// DisabledReason says why the service disabled a subscription.
type DisabledReason string

// DisabledFailing means every attempt failed for WEBHOOK_DISABLE_AFTER.
const DisabledFailing DisabledReason = "failing"

// RateLimitPerSecondMax bounds rateLimitPerSecond (the column's CHECK).
const RateLimitPerSecondMax = 10000

// WebhookCreated is the creation result: the only response carrying the
// secret (v1); a v1a subscription has no shared secret but a public key,
// so each scheme's response has one of the two.
type WebhookCreated struct {
	ID              uuid.UUID       `json:"id"`
	SignatureScheme SignatureScheme `json:"signatureScheme"`
	Secret          string          `json:"secret,omitempty"`
	PublicKey       string          `json:"publicKey,omitempty"`
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
	Headers            []WebhookHeader // sensitive ones sealed
	SignatureScheme    SignatureScheme
	// PublicKey is a v1a subscription's whpk_ key, made with its sealed private key.
	PublicKey *string
}

// WebhookUpdate is a validated partial update; nil members stay unchanged.
type WebhookUpdate struct {
	URL         *string
	Description *string
	EventTypes  []EventType
	Enabled     *bool
	// RateLimitPerSecond: Set with a nil Value clears the limit.
	RateLimitPerSecond OptionalInt
	// Headers, when non-nil, replace the custom headers (empty: none);
	// sensitive ones are sealed, or Keep the stored value.
	Headers []WebhookHeader
}

// OptionalInt is a nullable member of a partial update: Set says it was sent.
type OptionalInt struct {
	Set   bool
	Value *int
}

// WebhookTarget is what a delivery attempt needs to know about a subscription.
type WebhookTarget struct {
	ID               uuid.UUID
	WorkspaceID      uuid.UUID
	URL              string
	Enabled          bool
	SecretCiphertext []byte
	// PreviousSecretCiphertext also signs until PreviousSecretExpiresAt.
	PreviousSecretCiphertext []byte
	PreviousSecretExpiresAt  *time.Time
	RateLimitPerSecond       *int            // nil: unlimited
	Headers                  []WebhookHeader // sensitive ones sealed
}

// WebhookDelivery is the record of one delivery attempt, as the API returns it.
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

// EventDetail is an event with its recipients' delivery status (lists omit them).
type EventDetail struct {
	ID          uuid.UUID        `json:"id"`
	Type        EventType        `json:"type"`
	Data        json.RawMessage  `json:"data"`
	DateCreated time.Time        `json:"dateCreated"`
	Recipients  []EventRecipient `json:"recipients,omitempty"`
}
