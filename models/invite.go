package models

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// InviteStatus is where an invite stands, derived from its timestamps when
// it is read. The SDKs know pending and accepted; expired is this
// service's, for an invite whose token no longer admits anyone.
type InviteStatus string

// Invite statuses.
const (
	InvitePending  InviteStatus = "pending"
	InviteAccepted InviteStatus = "accepted"
	InviteExpired  InviteStatus = "expired"
)

// Invite is an invitation of an e-mail address into a workspace, in the
// SDKs' shape (role in upper case, the creator and workspace embedded).
type Invite struct {
	ID           uuid.UUID       `json:"id"`
	Creator      InviteCreator   `json:"creator"`
	DateCreated  time.Time       `json:"dateCreated"`
	Email        string          `json:"email"`
	Role         string          `json:"role"`
	Status       InviteStatus    `json:"status"`
	Workspace    InviteWorkspace `json:"workspace"`
	ExpiresAt    time.Time       `json:"expiresAt"`
	DateAccepted *time.Time      `json:"dateAccepted"`
	// Token is the single-use secret that accepts the invite: set only in
	// the response that creates it.
	Token string `json:"token,omitempty"`
}

// InviteCreator is the user whose key created the invite. Users here have
// an e-mail address only: name and username are always null.
type InviteCreator struct {
	ID       *uuid.UUID `json:"id"`
	Name     *string    `json:"name"`
	Username *string    `json:"username"`
}

// InviteWorkspace is the invite's workspace as the SDKs embed it.
type InviteWorkspace struct {
	ID          uuid.UUID `json:"id"`
	DateCreated time.Time `json:"dateCreated"`
	MemberCount int       `json:"memberCount"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
}

// InviteStatusAt is the status of an invite accepted at accepted (nil if
// not) and expiring at expires, at now.
func InviteStatusAt(accepted *time.Time, expires, now time.Time) InviteStatus {
	switch {
	case accepted != nil:
		return InviteAccepted
	case !now.Before(expires):
		return InviteExpired
	}
	return InvitePending
}

// SDKRole is r as the SDKs spell roles: ADMIN, MEMBER.
func (r Role) SDKRole() string { return strings.ToUpper(string(r)) }

// NewInvites is a validated request to invite addresses into a workspace.
type NewInvites struct {
	WorkspaceID uuid.UUID
	CreatorID   uuid.UUID
	Emails      []string
	Role        Role
	Now         time.Time
	ExpiresAt   time.Time
}

// InviteAcceptance is a presented invite token, with when it was presented.
type InviteAcceptance struct {
	InviteID uuid.UUID
	Token    string
	Now      time.Time
	// KeyCap is MAX_API_KEYS_PER_WORKSPACE: the acceptance mints a key,
	// so a workspace at its cap refuses it as it refuses a create (0: no cap).
	KeyCap int
}
