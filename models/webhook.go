package models

import (
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
	// CreatorID is null once the creating user has been removed.
	CreatorID   *uuid.UUID `json:"creatorId"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
}

// WebhookCreated is the creation result: the only response carrying the secret.
type WebhookCreated struct {
	ID     uuid.UUID `json:"id"`
	Secret string    `json:"secret"`
}

// NewWebhook is a validated request to create a subscription.
type NewWebhook struct {
	WorkspaceID uuid.UUID
	CreatorID   uuid.UUID
	URL         string
	Description string
	EventTypes  []EventType
	Enabled     bool
}

// WebhookUpdate is a validated partial update; nil members stay unchanged.
type WebhookUpdate struct {
	URL         *string
	Description *string
	EventTypes  []EventType
	Enabled     *bool
}

// WebhookTarget is what a delivery attempt needs to know about a
// subscription: where to send, whether it may, and the sealed secret.
type WebhookTarget struct {
	ID               uuid.UUID
	WorkspaceID      uuid.UUID
	URL              string
	Enabled          bool
	SecretCiphertext []byte
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
