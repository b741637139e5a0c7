package api

import (
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/models"
)

// workspaceRoutes declares the workspace itself and its invites. Any member
// reads the workspace; only admins change it and manage invites. Creating
// an invite takes a current secret: it mints a key, as creating one does.
func (s *Server) workspaceRoutes(ws *mux.Router) {
	admin := func(h http.Handler) http.Handler { return s.requireAdmin(h) }
	ws.HandleFunc("", s.getWorkspace).Methods(http.MethodGet).Name("workspaces_get")
	ws.Handle("", admin(http.HandlerFunc(s.updateWorkspace))).Methods(http.MethodPut).Name("workspaces_update")
	ws.Handle("/invites", admin(s.requireCurrentSecret(s.idempotent(s.createInvites)))).Methods(http.MethodPost).Name("invites_create")
	ws.Handle("/invites", admin(http.HandlerFunc(s.listInvites))).Methods(http.MethodGet).Name("invites_list")
	ws.Handle("/invites/{inviteId}", admin(http.HandlerFunc(s.revokeInvite))).Methods(http.MethodDelete).Name("invites_revoke")
}

const (
	workspaceNameMax = 256
	slugMax          = 64
	inviteCodeMax    = 256
)

// slugShape is the database's check: lower-case ASCII words joined by '-'.
var slugShape = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func (s *Server) getWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, err := s.store.Workspaces().Get(r.Context(), principal(r).WorkspaceID, s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ws)
}

// updateWorkspaceRequest is what the SDKs send. inviteCode is accepted so
// their calls work, and ignored: the service has no workspace-wide invite
// code, only invites per address.
type updateWorkspaceRequest struct {
	Name       Optional[string] `json:"name"`
	Slug       Optional[string] `json:"slug"`
	InviteCode Optional[string] `json:"inviteCode"`
}

func (req updateWorkspaceRequest) validate() (models.WorkspaceUpdate, error) {
	var u models.WorkspaceUpdate
	var v models.Validation
	if req.Name.Set {
		switch n := req.Name.Value; {
		case !req.Name.Valid:
			v.Add("name", "must be a string; a workspace always has a name")
		case strings.TrimSpace(n) == "" || utf8.RuneCountInString(n) > workspaceNameMax:
			v.Add("name", "must be 1 to 256 characters and not blank")
		case hasNUL(n):
			v.Add("name", noNUL)
		default:
			n = strings.TrimSpace(n)
			u.Name = &n
		}
	}
	if req.Slug.Set {
		switch sl := req.Slug.Value; {
		case !req.Slug.Valid:
			v.Add("slug", "must be a string; a workspace always has a slug")
		case len(sl) > slugMax || !slugShape.MatchString(sl):
			v.Add("slug", "must be 1 to 64 characters: lower-case letters and digits, in words joined by single hyphens")
		default:
			u.Slug = &sl
		}
	}
	if c := req.InviteCode.Value; req.InviteCode.Valid && (utf8.RuneCountInString(c) > inviteCodeMax || hasNUL(c)) {
		v.Add("inviteCode", "must be at most 256 characters, without NUL")
	}
	return u, v.Err()
}

func (s *Server) updateWorkspace(w http.ResponseWriter, r *http.Request) {
	var req updateWorkspaceRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		s.writeDecodeError(w, r, err)
		return
	}
	u, err := req.validate()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, now := principal(r).WorkspaceID, s.now()
	var ws models.Workspace
	if u.Empty() {
		// Nothing to change: the workspace as it is, dateUpdated kept.
		ws, err = s.store.Workspaces().Get(r.Context(), id, now)
	} else {
		ws, err = s.store.Workspaces().Update(r.Context(), id, u, now)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ws)
}
