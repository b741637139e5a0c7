package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/api"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

type inviteList struct {
	Items []models.Invite `json:"items"`
}

func (h *harness) invite(key string, body any) []models.Invite {
	h.t.Helper()
	var out inviteList
	h.doJSON(http.MethodPost, h.wsPath("invites"), key, body, http.StatusCreated, &out)
	return out.Items
}

func acceptPath(id uuid.UUID) string { return "/v1/invites/" + id.String() + "/accept" }

// invite → accept → the new key works with the invite's role; the token
// is single-use.
func TestInviteAcceptMintsAKeyWithTheRole(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	rec := h.do(http.MethodPost, h.wsPath("invites"), h.admin.Secret, map[string]any{"emails": []string{"Ann@example.com", "bob@example.com"}, "role": "ADMIN"})
	if rec.Code != http.StatusCreated || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d, Cache-Control %q; %s", rec.Code, rec.Header().Get("Cache-Control"), rec.Body)
	}
	member := h.invite(h.admin.Secret, map[string]any{"emails": []string{"carol@example.com"}, "role": "member"})[0]
	var created inviteList
	decodeJSON(t, rec.Body.Bytes(), &created)
	ann := created.Items[0]
	if ann.Email != "Ann@example.com" || ann.Role != "ADMIN" || ann.Status != models.InvitePending || !strings.HasPrefix(ann.Token, "oli_") ||
		ann.Workspace.ID != h.admin.WorkspaceID || ann.Workspace.MemberCount != 1 || ann.Creator.ID == nil || *ann.Creator.ID != h.admin.UserID ||
		member.Role != "MEMBER" {
		t.Fatalf("invites: %+v / %+v", ann, member)
	}

	var adminCreds, memberCreds store.Credentials
	h.doJSON(http.MethodPost, acceptPath(ann.ID), "", map[string]any{"token": ann.Token}, http.StatusCreated, &adminCreds)
	h.doJSON(http.MethodPost, acceptPath(member.ID), "", map[string]any{"token": member.Token}, http.StatusCreated, &memberCreds)
	if adminCreds.WorkspaceID != h.admin.WorkspaceID || !strings.HasPrefix(adminCreds.Secret, "olk_") {
		t.Fatalf("accepted: %+v", adminCreds)
	}
	hook := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}
	h.doJSON(http.MethodPost, h.wsPath("webhooks"), adminCreds.Secret, hook, http.StatusCreated, nil)
	h.doJSON(http.MethodPost, h.wsPath("webhooks"), memberCreds.Secret, hook, http.StatusForbidden, nil)
	h.doJSON(http.MethodGet, h.wsPath(), memberCreds.Secret, nil, http.StatusOK, nil)

	h.run([]apiCase{
		{name: "second use", method: "POST", url: acceptPath(ann.ID), body: map[string]any{"token": ann.Token}, status: 409, wantCode: "invite_accepted"},
		{name: "another invite's token", method: "POST", url: acceptPath(created.Items[1].ID), body: map[string]any{"token": ann.Token}, status: 404, wantCode: "not_found"},
		{name: "absent invite", method: "POST", url: acceptPath(uuid.New()), body: map[string]any{"token": ann.Token}, status: 404, wantCode: "not_found"},
		{name: "malformed id", method: "POST", url: "/v1/invites/nope/accept", body: map[string]any{"token": ann.Token}, status: 404, wantCode: "not_found"},
		{name: "no token", method: "POST", url: acceptPath(ann.ID), body: `{}`, status: 400, wantCode: "validation_failed", wantField: "token"},
		{name: "no body", method: "POST", url: acceptPath(ann.ID), status: 400, wantCode: "invalid_json"},
		{name: "invite a member", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"ANN@example.com"}}, status: 409, wantCode: "already_member"},
		{name: "revoke an accepted invite", method: "DELETE", url: h.wsPath("invites", ann.ID.String()), key: h.admin.Secret, status: 409, wantCode: "invite_accepted"},
	})

	// Inviting a pending address again resends: a new token, the old one dead.
	bob := created.Items[1]
	resent := h.invite(h.admin.Secret, map[string]any{"emails": []string{"Bob@Example.com"}})[0]
	if resent.ID == bob.ID || resent.Token == bob.Token {
		t.Errorf("re-invite: %+v, want a new invite", resent)
	}
	h.doJSON(http.MethodPost, acceptPath(bob.ID), "", map[string]any{"token": bob.Token}, http.StatusNotFound, nil)

	var page models.Page[models.Invite]
	h.doJSON(http.MethodGet, h.wsPath("invites"), h.admin.Secret, nil, http.StatusOK, &page)
	status := map[string]models.InviteStatus{}
	for _, i := range page.Items {
		status[i.Email] = i.Status
		if i.Token != "" {
			t.Errorf("the list shows %s's token", i.Email)
		}
	}
	if page.Meta.TotalItems != 3 || status["Ann@example.com"] != models.InviteAccepted || status["Bob@Example.com"] != models.InvitePending || status["bob@example.com"] != "" {
		t.Errorf("list: %+v", page)
	}
}

// Expired and revoked invites admit no one.
func TestInviteExpiredAndRevokedRefused(t *testing.T) {
	h := newHarness(t, func(d *api.Deps) { d.Config.InviteTTL = time.Hour })
	start := time.Now()
	h.clock.Set(start)
	invs := h.invite(h.admin.Secret, map[string]any{"emails": []string{"late@example.com", "gone@example.com"}})
	h.doJSON(http.MethodDelete, h.wsPath("invites", invs[1].ID.String()), h.admin.Secret, nil, http.StatusNoContent, nil)
	h.clock.Set(start.Add(time.Hour))
	var page models.Page[models.Invite]
	h.doJSON(http.MethodGet, h.wsPath("invites"), h.admin.Secret, nil, http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].Status != models.InviteExpired {
		t.Errorf("list after expiry and revocation: %+v", page.Items)
	}
	h.run([]apiCase{
		{name: "expired", method: "POST", url: acceptPath(invs[0].ID), body: map[string]any{"token": invs[0].Token}, status: 409, wantCode: "invite_expired"},
		{name: "revoked", method: "POST", url: acceptPath(invs[1].ID), body: map[string]any{"token": invs[1].Token}, status: 404, wantCode: "not_found"},
		{name: "revoke again", method: "DELETE", url: h.wsPath("invites", invs[1].ID.String()), key: h.admin.Secret, status: 404, wantCode: "not_found"},
	})
	// An expired invite is replaced by a new one for the address.
	again := h.invite(h.admin.Secret, map[string]any{"emails": []string{"late@example.com"}})
	h.doJSON(http.MethodPost, acceptPath(again[0].ID), "", map[string]any{"token": again[0].Token}, http.StatusCreated, nil)
}

func TestInviteRequests(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)
	var empty inviteList
	// The SDKs' create without arguments invites no one.
	for _, body := range []any{nil, `{}`, `{"emails":[]}`} {
		rec := h.do(http.MethodPost, h.wsPath("invites"), h.admin.Secret, body)
		if rec.Code != http.StatusOK {
			t.Fatalf("create %v: %d %s", body, rec.Code, rec.Body)
		}
		decodeJSON(t, rec.Body.Bytes(), &empty)
		if empty.Items == nil || len(empty.Items) != 0 {
			t.Errorf("create %v: %s, want items []", body, rec.Body)
		}
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = uuid.NewString()[:8] + "@example.com"
	}
	h.run([]apiCase{
		{name: "member creates", method: "POST", url: h.wsPath("invites"), key: member.Secret, body: map[string]any{"emails": []string{"x@example.com"}}, status: 403, wantCode: "forbidden"},
		{name: "member lists", method: "GET", url: h.wsPath("invites"), key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "member revokes", method: "DELETE", url: h.wsPath("invites", uuid.NewString()), key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "viewer", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"x@example.com"}, "role": "VIEWER"}, status: 400, wantCode: "validation_failed", wantField: "role"},
		{name: "unknown role", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"x@example.com"}, "role": "owner"}, status: 400, wantCode: "validation_failed", wantField: "role"},
		{name: "not an address", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"x@example.com", "nope"}}, status: 400, wantCode: "validation_failed", wantField: "emails[1]"},
		{name: "display name", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"X <x@example.com>"}}, status: 400, wantCode: "validation_failed", wantField: "emails[0]"},
		{name: "twice", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": []string{"x@example.com", "X@example.com"}}, status: 400, wantCode: "validation_failed", wantField: "emails[1]"},
		{name: "over 100", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: map[string]any{"emails": many}, status: 400, wantCode: "validation_failed", wantField: "emails"},
		{name: "emails not an array", method: "POST", url: h.wsPath("invites"), key: h.admin.Secret, body: `{"emails":"x@example.com"}`, status: 400, wantCode: "validation_failed", wantField: "emails"},
		{name: "another workspace", method: "POST", url: "/v1/workspaces/" + uuid.NewString() + "/invites", key: h.admin.Secret, body: map[string]any{"emails": []string{"x@example.com"}}, status: 404, wantCode: "not_found"},
		{name: "list, perPage over 100", method: "GET", url: h.wsPath("invites") + "?perPage=101", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "perPage"},
		{name: "revoke absent", method: "DELETE", url: h.wsPath("invites", uuid.NewString()), key: h.admin.Secret, status: 404, wantCode: "not_found"},
	})
}

// A retried acceptance with the same Idempotency-Key gets the same key
// back instead of invite_accepted; wrong tokens spend the address's
// failed-authentication budget.
func TestInviteAcceptRetriesAndThrottling(t *testing.T) {
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.RateLimitAuthFailures = config.RateLimit{Rate: 1.0 / 60, Burst: 2} })
	inv := h.invite(h.admin.Secret, map[string]any{"emails": []string{"x@example.com"}})[0]
	body := map[string]any{"token": inv.Token}
	first := h.do(http.MethodPost, acceptPath(inv.ID), "", body, "Idempotency-Key", "accept-1")
	again := h.do(http.MethodPost, acceptPath(inv.ID), "", body, "Idempotency-Key", "accept-1")
	if first.Code != http.StatusCreated || again.Code != http.StatusCreated || first.Body.String() != again.Body.String() ||
		again.Header().Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s / %d %s", first.Code, first.Body, again.Code, again.Body)
	}
	other := h.invite(h.admin.Secret, map[string]any{"emails": []string{"y@example.com"}})[0]
	h.run([]apiCase{
		{name: "wrong token 1", method: "POST", url: acceptPath(other.ID), body: map[string]any{"token": "oli_wrong"}, status: 404, wantCode: "not_found"},
		{name: "wrong token 2", method: "POST", url: acceptPath(other.ID), body: map[string]any{"token": "oli_wrong"}, status: 404, wantCode: "not_found"},
		{name: "throttled, even the right token", method: "POST", url: acceptPath(other.ID), body: map[string]any{"token": other.Token}, status: 429, wantCode: "rate_limited"},
	})
}

func decodeJSON(t *testing.T, raw []byte, out any) {
	t.Helper()
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// Addresses with characters no one sees or types (bidi overrides,
// zero-width and non-breaking spaces, C1 controls) are refused: net/mail
// reads them back unchanged, so "al\u200bice@example.com" was invited and
// listed next to alice@example.com, looking the same, as another user.
func TestInviteEmailsWithInvisibleCharacters(t *testing.T) {
	h := newHarness(t)
	var cases []apiCase
	for _, e := range []string{"al\u200bice@example.com", "a\u202e@example.com", "a\u00a0b@example.com", "x@\u0085.example.com", "a\ufeff@example.com", "a\u2028@example.com"} {
		cases = append(cases, apiCase{name: strings.ToValidUTF8(e, "?"), method: "POST", url: h.wsPath("invites"), key: h.admin.Secret,
			body: map[string]any{"emails": []string{"ok@example.com", e}}, status: 400, wantCode: "validation_failed", wantField: "emails[1]"})
	}
	h.run(cases)
	// Addresses in other scripts are still addresses.
	h.invite(h.admin.Secret, map[string]any{"emails": []string{"ünï@exämple.com", "用户@例子.广告"}})
}

// Accepting an invite mints a key, and so respects the workspace's key
// cap as creating one does: otherwise an admin could mint keys past
// MAX_API_KEYS_PER_WORKSPACE by inviting made-up addresses and accepting
// the tokens they are handed. The refused invite stays pending.
func TestInviteAcceptRespectsTheKeyCap(t *testing.T) {
	h := newHarness(t, func(d *api.Deps) { d.Config.MaxAPIKeysPerWorkspace = 2 })
	invs := h.invite(h.admin.Secret, map[string]any{"emails": []string{"one@example.com", "two@example.com"}})
	h.doJSON(http.MethodPost, acceptPath(invs[0].ID), "", map[string]any{"token": invs[0].Token}, http.StatusCreated, nil)
	rec := h.do(http.MethodPost, acceptPath(invs[1].ID), "", map[string]any{"token": invs[1].Token})
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "api_key_limit_reached") ||
		rec.Header().Get("X-Should-Retry") != "false" {
		t.Fatalf("accept past the key cap: %d %s", rec.Code, rec.Body)
	}
	var page models.Page[models.Invite]
	h.doJSON(http.MethodGet, h.wsPath("invites"), h.admin.Secret, nil, http.StatusOK, &page)
	for _, i := range page.Items {
		if i.ID == invs[1].ID && i.Status != models.InvitePending {
			t.Errorf("the refused invite: %s, want pending", i.Status)
		}
	}
}
