package models

import (
	"time"

	"github.com/google/uuid"
)

// Role is a user's role in a workspace.
type Role string

// Workspace roles.
const (
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleMember }

// Principal is the authenticated caller of a request: the API key used, its
// owner and the owner's role in the key's workspace.
type Principal struct {
	KeyID       uuid.UUID
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Role        Role
	// KeyExpiresAt is when the presented secret stops authenticating: the
	// key's expiry, or for the previous secret of a rotation the end of its
	// grace period (capped by the key's expiry).
	KeyExpiresAt *time.Time
	DateLastUsed *time.Time
	// PreviousSecret says the caller presented the previous secret of a
	// rotated key. A key is rotated because its secret may have leaked, so
	// that secret is a weaker credential: it cannot manage API keys.
	PreviousSecret bool
}

// IsAdmin reports whether the caller administers its workspace.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }
