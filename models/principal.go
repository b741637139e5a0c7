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

// Principal is a request's authenticated caller: key, owner and role.
type Principal struct {
	KeyID       uuid.UUID
	WorkspaceID uuid.UUID
	UserID      uuid.UUID
	Role        Role
	// KeyExpiresAt is when the presented secret stops authenticating.
	KeyExpiresAt *time.Time
	DateLastUsed *time.Time
	// PreviousSecret (a rotated key's, maybe leaked) cannot manage API keys.
	PreviousSecret bool
	// SecretHash lets a change under the key's row lock check it is current.
	SecretHash []byte
}

// ErrPreviousSecret refuses key management by a non-current secret.
var ErrPreviousSecret = &Error{
	Kind: ErrForbidden, Code: "previous_secret_not_allowed",
	Message: "this is the previous secret of a rotated API key: it cannot create, rename, rotate or revoke API keys; use the key's current secret",
}

// IsAdmin reports whether the caller administers its workspace.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }
