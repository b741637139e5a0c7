package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// The previous secret of a rotation may be the leaked one: it keeps working
// for everything else until its deadline, but it cannot create, rename,
// rotate or revoke any key (the reported takeover: it minted a permanent
// admin key, and rotated the key to lock out the legitimate new secret).
func TestPreviousSecretCannotManageKeys(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	var victim models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), h.admin.Secret, map[string]any{"name": "victim", "expiresAt": nil}, http.StatusCreated, &victim)
	var rotated models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(victim.ID.String(), "rotate"), victim.Secret, map[string]any{"gracePeriodSeconds": 3600}, http.StatusOK, &rotated)
	old, current := victim.Secret, rotated.Secret
	other := h.addKey(models.RoleMember)

	for _, c := range []struct {
		name, method, path string
		body               any
	}{
		{"create", http.MethodPost, h.keysPath(), map[string]any{"name": "attacker"}},
		{"create permanent", http.MethodPost, h.keysPath(), map[string]any{"name": "attacker", "expiresAt": nil}},
		{"rotate itself", http.MethodPost, h.keysPath(victim.ID.String(), "rotate"), map[string]any{"gracePeriodSeconds": 0}},
		{"rotate another", http.MethodPost, h.keysPath(other.APIKeyID.String(), "rotate"), map[string]any{}},
		{"rename", http.MethodPut, h.keysPath(victim.ID.String()), map[string]any{"name": "mine now"}},
		{"update without arguments", http.MethodPut, h.keysPath(victim.ID.String()), map[string]any{}},
		{"revoke", http.MethodDelete, h.keysPath(victim.ID.String()), nil},
		{"revoke another", http.MethodDelete, h.keysPath(other.APIKeyID.String()), nil},
	} {
		rec := h.do(c.method, c.path, old, c.body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusForbidden || e.Error.Code != "previous_secret_not_allowed" {
			t.Errorf("%s with the previous secret: %d %s, want 403 previous_secret_not_allowed", c.name, rec.Code, rec.Body)
		}
	}

	// Everything else still works with it until its deadline.
	for _, path := range []string{h.keysPath(), h.keysPath(victim.ID.String()), "/v1/projects?perPage=1", h.hooksPath()} {
		if rec := h.do(http.MethodGet, path, old, nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s with the previous secret: %d %s", path, rec.Code, rec.Body)
		}
	}
	// Nothing was changed by the refused calls: the current secret still
	// works and the key is as the rotation left it.
	var got models.APIKey
	h.doJSON(http.MethodGet, h.keysPath(victim.ID.String()), current, nil, http.StatusOK, &got)
	if got.Name == nil || *got.Name != "victim" || got.Status != models.KeyRotating {
		t.Fatalf("after the refused calls the key reads %+v", got)
	}
	var list []models.APIKey
	h.doJSON(http.MethodGet, h.keysPath(), current, nil, http.StatusOK, &list)
	for _, k := range list {
		if k.Name != nil && *k.Name == "attacker" {
			t.Fatal("the previous secret minted a key")
		}
	}
	// The current secret manages keys as before.
	h.doJSON(http.MethodPut, h.keysPath(victim.ID.String()), current, map[string]any{"name": "renamed"}, http.StatusOK, nil)
}
