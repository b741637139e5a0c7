package models

import (
	"time"

	"github.com/google/uuid"
)

// MaxGracePeriod bounds how long a rotated-away secret may keep working. A
// month covers any sane redeploy; beyond that the "old" secret is really a
// second live key and should be one.
const MaxGracePeriod = 30 * 24 * time.Hour

// NewAPIKey is a validated request to create an API key. Now is the
// request's instant, so the row's timestamps agree with the checks made on
// the request.
type NewAPIKey struct {
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Name        *string
	ExpiresAt   *time.Time // nil: never expires
	Now         time.Time
	// Cap is the most keys not revoked the workspace may hold, this one
	// included (MAX_API_KEYS_PER_WORKSPACE); 0: no cap.
	Cap int
}

// APIKeyRotation is a validated request to rotate a key.
type APIKeyRotation struct {
	// SetExpiry replaces the key's expiry with ExpiresAt (nil: never
	// expires); when false the current expiry is kept.
	SetExpiry bool
	ExpiresAt *time.Time
	// Grace is how long the replaced secret keeps working (0: it stops at
	// once), capped by the key's expiry.
	Grace time.Duration
	// MaxExpiresAt is the calling key's expiry: the rotated key, with the
	// expiry it keeps or is given, may not outlive it (nil: no bound).
	MaxExpiresAt *time.Time
	Now          time.Time
}

// APIKeySchedule is a key's stored state after its due transitions were
// applied: what the key's workflow needs to decide when to wake next.
type APIKeySchedule struct {
	Found                bool // false: the key is gone (its workspace was deleted)
	Revoked              bool
	Status               KeyStatus // the stored status
	ExpiresAt            *time.Time
	PreviousKeyExpiresAt *time.Time
	Changed              bool // this call wrote the row
}

// NextDeadline is the earliest instant at which the key's state changes by
// itself: the end of a grace period or the expiry. Nil when nothing is due.
func (s APIKeySchedule) NextDeadline() *time.Time {
	next := s.PreviousKeyExpiresAt
	if s.ExpiresAt != nil && (next == nil || s.ExpiresAt.Before(*next)) {
		next = s.ExpiresAt
	}
	return next
}
