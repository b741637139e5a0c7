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
	// SecretHash is the hash of the secret presented, so a change made
	// under the key's row lock can tell that the secret stopped being
	// current after the request was authenticated.
	SecretHash []byte
}

// ErrPreviousSecret refuses key management by a secret that is not its
// key's current one.
var ErrPreviousSecret = &Error{
	Kind: ErrForbidden, Code: "previous_secret_not_allowed",
	Message: "this is the previous secret of a rotated API key: it cannot create, rename, rotate or revoke API keys; use the key's current secret",
}

// IsAdmin reports whether the caller administers its workspace.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }
