package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// matrixCaller is one key of the matrix: its workspace and role.
type matrixCaller struct {
	name  string
	ws    string // "A" or "B"
	role  models.Role
	creds store.Credentials
}

// matrixEndpoint is one endpoint, the resource it acts on, and what it
// answers to a caller allowed to use it.
type matrixEndpoint struct {
	method, path string // path with {ws} and {id}
	resource     string // "", "adminKey", "memberKey", "hook", "event", "project", "invite", "portalSession"
	body         any
	ok           int  // the status when allowed
	adminOnly    bool // webhooks, events, invites, updating the workspace, portal sessions
}

// A tenancy matrix: two workspaces, an admin and a member in each; every
// endpoint called by every key against a fresh resource of each workspace.
// Each cell must be exactly what the docs promise: another workspace's
// resource (or path) is 404; in its own workspace a member gets 403 on
// webhooks, events, invites and updating the workspace, and 404 on another
// user's key; everything else succeeds. The matrix is printed with -v.
func TestTenancyMatrix(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	ctx := context.Background()
	wsB, err := h.store.Bootstrap(ctx, "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	memberB, err := h.store.AddMember(ctx, wsB.WorkspaceID, "mb-"+uuid.NewString()[:8]+"@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	callers := []matrixCaller{
		{"A-admin", "A", models.RoleAdmin, h.admin},
		{"A-member", "A", models.RoleMember, h.addKey(models.RoleMember)},
		{"B-admin", "B", models.RoleAdmin, wsB},
		{"B-member", "B", models.RoleMember, memberB},
	}
	admins := map[string]matrixCaller{"A": callers[0], "B": callers[2]}
	members := map[string]matrixCaller{"A": callers[1], "B": callers[3]}
	wsID := map[string]string{"A": h.admin.WorkspaceID.String(), "B": wsB.WorkspaceID.String()}
	hook := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}

	// fresh makes a new resource of kind in workspace ws, through the API
	// with a key of that workspace, and returns its id.
	fresh := func(kind, ws string) string {
		t.Helper()
		var out struct {
			ID string `json:"id"`
		}
		switch kind {
		case "adminKey", "memberKey":
			owner := admins[ws]
			if kind == "memberKey" {
				owner = members[ws]
			}
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/api-keys", owner.creds.Secret, map[string]any{"name": "target"}, http.StatusCreated, &out)
		case "hook":
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/webhooks", admins[ws].creds.Secret, hook, http.StatusCreated, &out)
		case "v1aHook":
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/webhooks", admins[ws].creds.Secret,
				map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}, "signatureScheme": "v1a"}, http.StatusCreated, &out)
		case "event":
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/events", admins[ws].creds.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &out)
		case "invite":
			var created struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/invites", admins[ws].creds.Secret,
				map[string]any{"emails": []string{"i-" + uuid.NewString()[:8] + "@acme.test"}}, http.StatusCreated, &created)
			out.ID = created.Items[0].ID
		case "portalSession":
			h.doJSON(http.MethodPost, "/v1/workspaces/"+wsID[ws]+"/portal-sessions", admins[ws].creds.Secret, nil, http.StatusCreated, &out)
		case "project":
			h.doJSON(http.MethodPost, "/v1/projects", admins[ws].creds.Secret, map[string]any{"name": "p-" + uuid.NewString()[:8], "taskType": "llm-base"}, http.StatusCreated, &out)
		}
		return out.ID
	}

	endpoints := []matrixEndpoint{
		{http.MethodGet, "/v1/workspaces/{ws}", "", nil, 200, false},
		{http.MethodPut, "/v1/workspaces/{ws}", "", map[string]any{}, 200, true},
		{http.MethodPost, "/v1/workspaces/{ws}/invites", "", map[string]any{}, 200, true},
		{http.MethodGet, "/v1/workspaces/{ws}/invites", "", nil, 200, true},
		{http.MethodDelete, "/v1/workspaces/{ws}/invites/{id}", "invite", nil, 204, true},
		{http.MethodGet, "/v1/workspaces/{ws}/api-keys", "", nil, 200, false},
		{http.MethodPost, "/v1/workspaces/{ws}/api-keys", "", map[string]any{"name": "m"}, 201, false},
		{http.MethodGet, "/v1/workspaces/{ws}/api-keys/{id}", "adminKey", nil, 200, false},
		{http.MethodGet, "/v1/workspaces/{ws}/api-keys/{id}", "memberKey", nil, 200, false},
		{http.MethodPut, "/v1/workspaces/{ws}/api-keys/{id}", "adminKey", map[string]any{"name": "r"}, 200, false},
		{http.MethodPut, "/v1/workspaces/{ws}/api-keys/{id}", "memberKey", map[string]any{"name": "r"}, 200, false},
		{http.MethodPost, "/v1/workspaces/{ws}/api-keys/{id}/rotate", "adminKey", map[string]any{}, 200, false},
		{http.MethodPost, "/v1/workspaces/{ws}/api-keys/{id}/rotate", "memberKey", map[string]any{}, 200, false},
		{http.MethodDelete, "/v1/workspaces/{ws}/api-keys/{id}", "adminKey", nil, 204, false},
		{http.MethodDelete, "/v1/workspaces/{ws}/api-keys/{id}", "memberKey", nil, 204, false},
		{http.MethodGet, "/v1/workspaces/{ws}/webhooks", "", nil, 200, true},
		{http.MethodPost, "/v1/workspaces/{ws}/webhooks", "", hook, 201, true},
		{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}", "hook", nil, 200, true},
		{http.MethodPut, "/v1/workspaces/{ws}/webhooks/{id}", "hook", map[string]any{"enabled": false}, 200, true},
		{http.MethodDelete, "/v1/workspaces/{ws}/webhooks/{id}", "hook", nil, 204, true},
		{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}/deliveries", "hook", nil, 200, true},
		{http.MethodPost, "/v1/workspaces/{ws}/webhooks/{id}/secret/rotate", "hook", map[string]any{}, 200, true},
		{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}/public-key", "v1aHook", nil, 200, true},
		{http.MethodPost, "/v1/workspaces/{ws}/webhooks/{id}/test", "hook", nil, 202, true},
		{http.MethodPost, "/v1/workspaces/{ws}/events", "", map[string]any{"type": "test.created", "data": map[string]any{}}, 202, true},
		{http.MethodGet, "/v1/workspaces/{ws}/events", "", nil, 200, true},
		{http.MethodGet, "/v1/workspaces/{ws}/events/{id}", "event", nil, 200, true},
		{http.MethodGet, "/v1/workspaces/{ws}/webhooks/{id}/deliveries?status=failed", "hook", nil, 200, true},
		{http.MethodPost, "/v1/workspaces/{ws}/portal-sessions", "", map[string]any{"readOnly": true}, 201, true},
		{http.MethodGet, "/v1/workspaces/{ws}/portal-sessions", "", nil, 200, true},
		{http.MethodDelete, "/v1/workspaces/{ws}/portal-sessions/{id}", "portalSession", nil, 204, true},
		{http.MethodDelete, "/v1/projects/{id}", "project", nil, 204, false},
	}

	var rows []string
	cells, bad := 0, 0
	for _, c := range callers {
		for _, target := range []string{"A", "B"} {
			for _, e := range endpoints {
				want := e.ok
				switch {
				case target != c.ws:
					want = http.StatusNotFound // another workspace's path or project
				case e.adminOnly && c.role != models.RoleAdmin:
					want = http.StatusForbidden
				case e.resource == "adminKey" && c.role != models.RoleAdmin:
					want = http.StatusNotFound // another user's key reads as absent
				}
				path := strings.ReplaceAll(e.path, "{ws}", wsID[target])
				if e.resource != "" {
					path = strings.ReplaceAll(path, "{id}", fresh(e.resource, target))
				}
				got := h.do(e.method, path, c.creds.Secret, e.body).Code
				cells++
				mark := "ok"
				if got != want {
					bad++
					mark = "WRONG"
				}
				rows = append(rows, fmt.Sprintf("%-8s -> %s  %-6s %-45s %-9s got %d want %d  %s",
					c.name, target, e.method, e.path, e.resource, got, want, mark))
			}
		}
	}
	// GET /v1/projects has no workspace in its path: each key sees only
	// its own workspace's projects.
	for _, c := range callers {
		var page models.Page[models.Project]
		h.doJSON(http.MethodGet, "/v1/projects?perPage=100", c.creds.Secret, nil, http.StatusOK, &page)
		cells++
		for _, p := range page.Items {
			if p.WorkspaceID.String() != wsID[c.ws] {
				bad++
				rows = append(rows, fmt.Sprintf("%-8s GET /v1/projects lists project %s of another workspace  WRONG", c.name, p.ID))
			}
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		return strings.HasSuffix(rows[i], "WRONG") && !strings.HasSuffix(rows[j], "WRONG")
	})
	t.Logf("tenancy matrix: %d cells (%d callers × 2 workspaces × %d endpoints, plus project lists), %d wrong\n%s",
		cells, len(callers), len(endpoints), bad, strings.Join(rows, "\n"))
	if bad > 0 {
		t.Fatalf("%d of %d cells differ from the documented 2xx/403/404", bad, cells)
	}
}
