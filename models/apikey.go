package models

import (
	"crypto/subtle"
	"time"

	"github.com/google/uuid"
)

// KeyStatus is the lifecycle state of an API key.
type KeyStatus string

// API key states.
const (
	KeyActive   KeyStatus = "active"
	KeyRotating KeyStatus = "rotating"
	KeyExpired  KeyStatus = "expired"
)

// APIKeyNameMax is the longest accepted key name.
const APIKeyNameMax = 120

// APIKey is an API key as the API returns it. Secret is set only in the
// response that creates or rotates the key.
type APIKey struct {
	ID                   uuid.UUID  `json:"id"`
	Name                 *string    `json:"name"`
	DateCreated          time.Time  `json:"dateCreated"`
	DateUpdated          time.Time  `json:"dateUpdated"`
	DateLastUsed         *time.Time `json:"dateLastUsed"`
	SecureKey            string     `json:"secureKey"`
	Secret               string     `json:"secret,omitempty"`
	Status               KeyStatus  `json:"status"`
	ExpiresAt            *time.Time `json:"expiresAt"`
	LastRotatedAt        *time.Time `json:"lastRotatedAt"`
	PreviousKeyExpiresAt *time.Time `json:"previousKeyExpiresAt"`

	WorkspaceID uuid.UUID `json:"-"`
	UserID      uuid.UUID `json:"-"`
}

// KeyStatusAt derives a key's status at an instant from its timestamps. It is
// the single source of truth for reads and authentication, so a key's state
// never depends on whether the worker has caught up. An instant equal to a
// deadline counts as past it.
func KeyStatusAt(now time.Time, expiresAt, previousKeyExpiresAt *time.Time) KeyStatus {
	switch {
	case expiresAt != nil && !now.Before(*expiresAt):
		return KeyExpired
	case previousKeyExpiresAt != nil && now.Before(*previousKeyExpiresAt):
		return KeyRotating
	default:
		return KeyActive
	}
}

// WithStatusAt returns k with Status and the rotation fields as they read at
// now: a grace period that has ended is no longer shown.
func (k APIKey) WithStatusAt(now time.Time) APIKey {
	k.Status = KeyStatusAt(now, k.ExpiresAt, k.PreviousKeyExpiresAt)
	if k.Status != KeyRotating {
		k.PreviousKeyExpiresAt = nil
	}
	return k
}

// KeyCredential is what authentication needs to know about a key found by
// the hash of a presented secret.
type KeyCredential struct {
	KeyID                uuid.UUID
	WorkspaceID          uuid.UUID
	UserID               uuid.UUID
	Role                 Role
	SecretHash           []byte
	PreviousSecretHash   []byte
	ExpiresAt            *time.Time
	PreviousKeyExpiresAt *time.Time
	RevokedAt            *time.Time
	DateLastUsed         *time.Time
}

// Authenticate decides whether a secret with the given hash opens this key at
// now. Hashes are compared in constant time; the previous secret only counts
// before its own deadline.
func (c KeyCredential) Authenticate(hash []byte, now time.Time) (Principal, bool) {
	if c.RevokedAt != nil || KeyStatusAt(now, c.ExpiresAt, nil) == KeyExpired {
		return Principal{}, false
	}
	// ConstantTimeCompare calls two empty slices equal; a credential with no
	// stored hash must not open for an empty one.
	current := len(c.SecretHash) > 0 && subtle.ConstantTimeCompare(hash, c.SecretHash) == 1
	previous := len(c.PreviousSecretHash) > 0 &&
		subtle.ConstantTimeCompare(hash, c.PreviousSecretHash) == 1 &&
		c.PreviousKeyExpiresAt != nil && now.Before(*c.PreviousKeyExpiresAt)
	if !current && !previous {
		return Principal{}, false
	}
	p := Principal{
		KeyID:        c.KeyID,
		WorkspaceID:  c.WorkspaceID,
		UserID:       c.UserID,
		Role:         c.Role,
		KeyExpiresAt: c.ExpiresAt,
		DateLastUsed: c.DateLastUsed,
		SecretHash:   hash,
	}
	if !current {
		p.PreviousSecret = true
		if c.ExpiresAt == nil || c.PreviousKeyExpiresAt.Before(*c.ExpiresAt) {
			p.KeyExpiresAt = c.PreviousKeyExpiresAt
		}
	}
	return p, true
}

// ErrAPIKeyExpired refuses the rotation of an expired key: expiry is final,
// and a rotation must not bring a dead key back to life.
var ErrAPIKeyExpired = Conflict("api_key_expired",
	"the API key has expired and cannot be rotated; create a new key instead")
