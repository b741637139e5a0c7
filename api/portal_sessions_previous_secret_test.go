package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// A portal link is a credential: its session creates and edits webhooks
// for up to a day. Like a key or an invite, it is not minted with a
// rotation's previous secret, which may be the leaked one and would
// otherwise outlive its own deadline through the session it minted.
func TestPreviousSecretCannotMintPortalLinks(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	var victim models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{"name": "victim", "expiresAt": nil}, http.StatusCreated, &victim)
	var rotated models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(victim.ID.String(), "rotate"), victim.Secret, map[string]any{"gracePeriodSeconds": 3600}, http.StatusOK, &rotated)
	path := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/portal-sessions"

	rec := h.do(http.MethodPost, path, victim.Secret, map[string]any{"expiresInSeconds": 86400})
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "previous_secret_not_allowed") {
		t.Errorf("mint with the previous secret: %d %s, want 403 previous_secret_not_allowed", rec.Code, rec.Body)
	}
	// Looking at the sessions still works with it, and the current secret mints.
	if rec := h.do(http.MethodGet, path, victim.Secret, nil); rec.Code != http.StatusOK {
		t.Errorf("list with the previous secret: %d %s", rec.Code, rec.Body)
	}
	h.doJSON(http.MethodPost, path, rotated.Secret, map[string]any{}, http.StatusCreated, nil)
}
