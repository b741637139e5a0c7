package models

import "time"

// SignatureScheme is how a subscription's deliveries are signed (Standard
// Webhooks): v1 is HMAC-SHA256 with a shared whsec_ secret, v1a is ed25519,
// verified with a whpk_ public key.
type SignatureScheme string

const (
	SignatureV1  SignatureScheme = "v1"
	SignatureV1a SignatureScheme = "v1a"
)

// WebhookPublicKey is a v1a subscription's public key and, during a
// rotation's grace period, the previous one, which also signs until then.
type WebhookPublicKey struct {
	PublicKey         string     `json:"publicKey"`
	PreviousPublicKey *string    `json:"previousPublicKey"`
	PreviousExpiresAt *time.Time `json:"previousExpiresAt"`
}
