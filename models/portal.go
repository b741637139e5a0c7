package models

import (
	"time"

	"github.com/google/uuid"
)

// Bounds of a portal session's lifetime (POST .../portal-sessions).
const (
	PortalSessionTTLDefault = time.Hour
	PortalSessionTTLMin     = time.Minute
	PortalSessionTTLMax     = 24 * time.Hour
)

// PortalSession is a consumer portal session as admins list it; its token
// and cookie secret are never shown again after minting.
type PortalSession struct {
	ID          uuid.UUID  `json:"id"`
	WorkspaceID uuid.UUID  `json:"workspaceId"`
	CreatedBy   *uuid.UUID `json:"createdBy"`
	ReadOnly    bool       `json:"readOnly"`
	DateCreated time.Time  `json:"dateCreated"`
	ExpiresAt   time.Time  `json:"expiresAt"`
	// OpenedAt is when the link was used (it works once); null until then.
	OpenedAt   *time.Time `json:"openedAt"`
	LastSeenAt *time.Time `json:"lastSeenAt"`
}

// NewPortalSession is a session to store, its token already hashed.
type NewPortalSession struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	CreatedBy   uuid.UUID
	TokenHash   []byte
	ReadOnly    bool
	ExpiresAt   time.Time
}

// PortalSessionCreated is the answer to minting: the link, shown once.
type PortalSessionCreated struct {
	ID        uuid.UUID `json:"id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}
