package api

import (
	"net/mail"
	"strconv"
	"strings"
	"unicode"

	"github.com/openlayer-ai/workspace-service/models"
)

// maxInvitesPerRequest bounds one request's addresses (and its transaction).
const maxInvitesPerRequest = 100

// createInvitesRequest is the SDKs' workspaces.invites.create. Both members
// are optional there: no addresses invites no one.
type createInvitesRequest struct {
	Emails []string `json:"emails"`
	Role   *string  `json:"role"`
}

// validate reads the addresses (each once, case-insensitively) and the
// role, MEMBER when none is given. The SDKs spell roles in upper case; the
// service's own lower-case names are accepted too.
func (req createInvitesRequest) validate() ([]string, models.Role, error) {
	var v models.Validation
	role := models.RoleMember
	if req.Role != nil {
		switch r := models.Role(strings.ToLower(*req.Role)); {
		case r.Valid():
			role = r
		case r == "viewer":
			v.Add("role", "the service has no viewer role: invite as MEMBER or ADMIN")
		default:
			v.Add("role", "must be MEMBER or ADMIN")
		}
	}
	if len(req.Emails) > maxInvitesPerRequest {
		v.Add("emails", "must hold at most 100 addresses")
		return nil, role, v.Err()
	}
	seen := map[string]bool{}
	for i, e := range req.Emails {
		field := "emails[" + strconv.Itoa(i) + "]"
		switch {
		case !validEmail(e):
			v.Add(field, "must be an e-mail address such as user@example.com (3 to 320 visible characters, no display name)")
		case seen[strings.ToLower(e)]:
			v.Add(field, "appears more than once")
		}
		seen[strings.ToLower(e)] = true
	}
	return req.Emails, role, v.Err()
}

// validEmail admits a bare address that net/mail reads back unchanged, so
// what is stored is what was sent, of visible characters only: net/mail
// takes any non-ASCII rune, so an address with a zero-width space, a bidi
// override or a control character would be listed looking like another.
func validEmail(e string) bool {
	if len(e) < 3 || len(e) > 320 || strings.IndexFunc(e, invisible) >= 0 {
		return false
	}
	a, err := mail.ParseAddress(e)
	return err == nil && a.Name == "" && a.Address == e
}

// invisible reports runes that are not printed as themselves: controls
// (NUL among them), format characters (zero-width, bidi) and spaces.
func invisible(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }

// acceptInviteRequest carries the token that was returned when the invite
// was created.
type acceptInviteRequest struct {
	Token *string `json:"token"`
}

// maxInviteToken bounds what is hashed; real tokens are 44 characters.
const maxInviteToken = 256

func (req acceptInviteRequest) validate() (string, error) {
	var v models.Validation
	switch {
	case req.Token == nil:
		v.Add("token", "is required: the token returned when the invite was created")
	case *req.Token == "" || len(*req.Token) > maxInviteToken:
		v.Add("token", "must be 1 to 256 characters")
	}
	if err := v.Err(); err != nil {
		return "", err
	}
	return *req.Token, nil
}
