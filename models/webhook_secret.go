package models

import (
	"time"

	"github.com/google/uuid"
)

// Signing-secret rotation's grace period: how long the replaced secret
// keeps signing beside the new one. A week covers any receiver's redeploy;
// a day is Svix's default too. Zero drops the old secret at once.
const (
	WebhookSecretGraceDefault = 24 * time.Hour
	WebhookSecretGraceMax     = 7 * 24 * time.Hour
)

// WebhookSecretRotated is the rotation result: the only response carrying
// the new secret. PreviousSecretExpiresAt is when the replaced secret stops
// signing deliveries (null: it already has).
type WebhookSecretRotated struct {
	Secret                  string     `json:"secret"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

// WebhookTestAccepted answers a test event's request: the stored event,
// whose delivery records the subscription's deliveries list shows.
type WebhookTestAccepted struct {
	EventID uuid.UUID `json:"eventId"`
}
