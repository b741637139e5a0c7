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
	KeyID        uuid.UUID
	WorkspaceID  uuid.UUID
	UserID       uuid.UUID
	Role         Role
	KeyExpiresAt *time.Time
	DateLastUsed *time.Time
}

// IsAdmin reports whether the caller administers its workspace.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }
