package invites_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

func wsPath(env *testenv.Env, rest string) string {
	return "/workspaces/" + env.WorkspaceID.String() + rest
}

// invite creates one invite per address with the admin key.
func invite(t *testing.T, env *testenv.Env, role string, emails ...string) []models.Invite {
	t.Helper()
	var out struct {
		Items []models.Invite `json:"items"`
	}
	env.DoJSON(t, http.MethodPost, wsPath(env, "/invites"), env.AdminKey, map[string]any{"emails": emails, "role": role}, http.StatusCreated, &out)
	return out.Items
}

// accept presents an invite's token, with no API key, and returns the
// status and body.
func accept(t *testing.T, env *testenv.Env, inv models.Invite, token string) (int, []byte) {
	t.Helper()
	return env.Do(t, http.MethodPost, "/invites/"+inv.ID.String()+"/accept", "", map[string]any{"token": token})
}

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("not the error shape: %s", body)
	}
	return e.Error.Code
}

// invite → accept → the new key works with its role: an admin's creates a
// webhook, a member's is refused; a token is good once.
func TestInviteAcceptGivesAWorkingKeyWithItsRole(t *testing.T) {
	env := testenv.Start(t)
	invs := invite(t, env, "ADMIN", "admin-"+uuid.NewString()[:8]+"@example.com")
	invs = append(invs, invite(t, env, "MEMBER", "member-"+uuid.NewString()[:8]+"@example.com")...)

	creds := make([]store.Credentials, 2)
	for i, inv := range invs {
		status, body := accept(t, env, inv, inv.Token)
		if status != http.StatusCreated {
			t.Fatalf("accept %s: %d %s", inv.Email, status, body)
		}
		if err := json.Unmarshal(body, &creds[i]); err != nil || creds[i].Secret == "" || creds[i].WorkspaceID != env.WorkspaceID {
			t.Fatalf("accept %s: %s (%v)", inv.Email, body, err)
		}
	}
	admin, member := creds[0].Secret, creds[1].Secret
	hook := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks"), admin, hook, http.StatusCreated, nil)
	status, body := env.Do(t, http.MethodPost, wsPath(env, "/webhooks"), member, hook)
	if status != http.StatusForbidden || errorCode(t, body) != "forbidden" {
		t.Errorf("a member's key creates a webhook: %d %s, want 403 forbidden", status, body)
	}
	// Both keys are their own users' and read the workspace, which counts them.
	var ws models.Workspace
	env.DoJSON(t, http.MethodGet, wsPath(env, ""), member, nil, http.StatusOK, &ws)
	if ws.MemberCount != 3 || ws.InviteCount != 0 {
		t.Errorf("workspace after two acceptances: %d members, %d pending invites; want 3 and 0", ws.MemberCount, ws.InviteCount)
	}
	// The admin's new key can invite in turn; the member's cannot.
	env.DoJSON(t, http.MethodGet, wsPath(env, "/invites"), admin, nil, http.StatusOK, nil)
	env.DoJSON(t, http.MethodGet, wsPath(env, "/invites"), member, nil, http.StatusForbidden, nil)

	// Second use of a token is refused, and mints nothing.
	status, body = accept(t, env, invs[1], invs[1].Token)
	if status != http.StatusConflict || errorCode(t, body) != "invite_accepted" {
		t.Errorf("second use of the token: %d %s, want 409 invite_accepted", status, body)
	}
	var keys int
	if err := env.DB.QueryRow(`SELECT count(*) FROM api_keys WHERE user_id = ?`, creds[1].UserID).Scan(&keys); err != nil || keys != 1 {
		t.Errorf("the member has %d keys (%v), want 1", keys, err)
	}
}

// A revoked invite's token admits no one, nor does another invite's.
func TestRevokedInviteRefused(t *testing.T) {
	env := testenv.Start(t)
	invs := invite(t, env, "MEMBER", "r-"+uuid.NewString()[:8]+"@example.com", "s-"+uuid.NewString()[:8]+"@example.com")
	env.DoJSON(t, http.MethodDelete, wsPath(env, "/invites/"+invs[0].ID.String()), env.AdminKey, nil, http.StatusNoContent, nil)
	if status, body := accept(t, env, invs[0], invs[0].Token); status != http.StatusNotFound || errorCode(t, body) != "not_found" {
		t.Errorf("revoked invite: %d %s, want 404 not_found", status, body)
	}
	if status, body := accept(t, env, invs[1], invs[0].Token); status != http.StatusNotFound {
		t.Errorf("another invite's token: %d %s, want 404", status, body)
	}
	if status, body := accept(t, env, invs[1], invs[1].Token); status != http.StatusCreated {
		t.Errorf("the other invite: %d %s, want 201", status, body)
	}
}

// INVITE_TTL holds on real processes: past it the token is refused and
// the invite lists as expired.
func TestExpiredInviteRefused(t *testing.T) {
	const ttl = 2 * time.Second
	env := testenv.Start(t, func(c *config.Config) { c.InviteTTL = ttl })
	inv := invite(t, env, "ADMIN", "late-"+uuid.NewString()[:8]+"@example.com")[0]
	if got := inv.ExpiresAt.Sub(inv.DateCreated); got != ttl {
		t.Errorf("expiresAt - dateCreated = %s, want INVITE_TTL %s", got, ttl)
	}
	time.Sleep(time.Until(inv.ExpiresAt) + 100*time.Millisecond)
	if status, body := accept(t, env, inv, inv.Token); status != http.StatusConflict || errorCode(t, body) != "invite_expired" {
		t.Errorf("expired invite: %d %s, want 409 invite_expired", status, body)
	}
	var page models.Page[models.Invite]
	env.DoJSON(t, http.MethodGet, wsPath(env, "/invites"), env.AdminKey, nil, http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].Status != models.InviteExpired {
		t.Errorf("listed: %+v, want one expired invite", page.Items)
	}
}
