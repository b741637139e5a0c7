package models

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// WorkspaceActive is the one status a workspace has here: the SDKs' other
// values (past_due, trialing, …) are billing states, and the service has
// no billing.
const WorkspaceActive = "active"

// Workspace is a workspace as the SDKs' workspaces.retrieve reads it. The
// counts come from the service's own rows; the members the service has no
// notion of (billing periods and usage, SAML, joining by e-mail domain)
// are always null.
type Workspace struct {
	ID          uuid.UUID  `json:"id"`
	CreatorID   *uuid.UUID `json:"creatorId"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
	// InviteCount counts pending invites: not accepted, not expired.
	InviteCount     int             `json:"inviteCount"`
	MemberCount     int             `json:"memberCount"`
	Name            string          `json:"name"`
	PeriodEndDate   *time.Time      `json:"periodEndDate"`
	PeriodStartDate *time.Time      `json:"periodStartDate"`
	ProjectCount    int             `json:"projectCount"`
	Slug            string          `json:"slug"`
	Status          string          `json:"status"`
	MonthlyUsage    json.RawMessage `json:"monthlyUsage"`
	SAMLOnlyAccess  *bool           `json:"samlOnlyAccess"`
	WildcardDomains []string        `json:"wildcardDomains"`
}

// WorkspaceUpdate holds the members an update changes; nil leaves one as is.
type WorkspaceUpdate struct {
	Name *string
	Slug *string
}

// Empty reports whether the update changes nothing.
func (u WorkspaceUpdate) Empty() bool { return u.Name == nil && u.Slug == nil }
