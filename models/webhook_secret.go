package models

import (
	"time"

	"github.com/google/uuid"
)

// Signing-secret rotation's grace period, how long the replaced secret keeps
// signing: a day is Svix's default, a week covers any receiver's redeploy.
const (
	WebhookSecretGraceDefault = 24 * time.Hour
	WebhookSecretGraceMax     = 7 * 24 * time.Hour
)

// WebhookSecretRotated is the rotation result, the only one carrying the
// secret (v1); a v1a rotation shows the new public key instead.
type WebhookSecretRotated struct {
	Secret                  string     `json:"secret,omitempty"`
	PublicKey               string     `json:"publicKey,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
}

// WebhookTestAccepted answers a test event's request with the stored event.
type WebhookTestAccepted struct {
	EventID uuid.UUID `json:"eventId"`
}
