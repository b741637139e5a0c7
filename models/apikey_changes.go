package models

import (
	"time"

	"github.com/google/uuid"
)

// MaxGracePeriod bounds a rotated-away secret's life: longer, it is a second key.
const MaxGracePeriod = 30 * 24 * time.Hour

// NewAPIKey is a validated request to create an API key at Now.
type NewAPIKey struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Name        *string
	ExpiresAt   *time.Time // nil: never expires
	Now         time.Time
	Cap         int // most unrevoked keys, this one included; 0: no cap
}

// APIKeyRotation is a validated request to rotate a key.
type APIKeyRotation struct {
	SetExpiry bool // replace the expiry with ExpiresAt (nil: never)
	ExpiresAt *time.Time
	Grace     time.Duration // capped by the key's expiry
	// MaxExpiresAt is the calling key's expiry, which the rotated key may not outlive.
	MaxExpiresAt *time.Time
	Now          time.Time
}

// APIKeySchedule is a key's stored state after its due transitions.
type APIKeySchedule struct {
	Found                bool // false: the key is gone (its workspace was deleted)
	Revoked              bool
	Status               KeyStatus // the stored status
	ExpiresAt            *time.Time
	PreviousKeyExpiresAt *time.Time
	Changed              bool // this call wrote the row
}

// NextDeadline is when the key's state next changes by itself; nil if never.
func (s APIKeySchedule) NextDeadline() *time.Time {
	next := s.PreviousKeyExpiresAt
	if s.ExpiresAt != nil && (next == nil || s.ExpiresAt.Before(*next)) {
		next = s.ExpiresAt
	}
	return next
}
