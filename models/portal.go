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
	// APIKeyID is the minting key: the session ends when it is revoked or
	// expires, or its owner stops being an admin of the workspace.
	APIKeyID uuid.UUID `json:"-"`
	// The portal's pages show whose portal it is: the workspace's name and,
	// when the link was minted with them, the host application's name and logo.
	WorkspaceName   string  `json:"-"`
	ApplicationName *string `json:"-"`
	LogoURL         *string `json:"-"`
}

// NewPortalSession is a session to store, its token already hashed.
type NewPortalSession struct {
	ID          uuid.UUID
	WorkspaceID uuid.UUID
	CreatedBy   uuid.UUID
	TokenHash   []byte
	ReadOnly    bool
	ExpiresAt   time.Time
	APIKeyID    uuid.UUID
	// APIKeySecretHash is the minting secret's: the session ends when a
	// rotation retires it (past any grace period).
	APIKeySecretHash []byte
	// ApplicationName and LogoURL (https) brand the portal; nil: none.
	ApplicationName *string
	LogoURL         *string
}

// Bounds of a mint's branding (validated by the API).
const (
	PortalApplicationNameMax = 100
	PortalLogoURLMax         = 512
)

// PortalSessionCreated is the answer to minting: the link, shown once.
type PortalSessionCreated struct {
	ID        uuid.UUID `json:"id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}
