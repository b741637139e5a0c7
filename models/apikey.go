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

// APIKey is an API key as the API returns it; Secret is set only when issued.
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

// KeyStatusAt derives a key's status at now from its timestamps alone, so it
// never waits for the worker; a deadline counts as past.
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

// WithStatusAt returns k with Status and the rotation fields as of now.
func (k APIKey) WithStatusAt(now time.Time) APIKey {
	k.Status = KeyStatusAt(now, k.ExpiresAt, k.PreviousKeyExpiresAt)
	if k.Status != KeyRotating {
		k.PreviousKeyExpiresAt = nil
	}
	return k
}

// KeyCredential is what authentication needs about a key found by hash.
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

// Authenticate reports, in constant time, whether a secret with hash opens the key at now.
func (c KeyCredential) Authenticate(hash []byte, now time.Time) (Principal, bool) {
	if c.RevokedAt != nil || KeyStatusAt(now, c.ExpiresAt, nil) == KeyExpired {
		return Principal{}, false
	}
	// ConstantTimeCompare calls two empty slices equal.
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

// ErrAPIKeyExpired refuses rotating an expired key: expiry is final.
var ErrAPIKeyExpired = Conflict("api_key_expired",
	"the API key has expired and cannot be rotated; create a new key instead")
