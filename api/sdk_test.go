package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// Requests exactly as the official SDKs (Stainless-generated Go, TypeScript
// and Python clients) send them, for the cases where they once differed
// from what the service accepted.

// An update without arguments is {} in every SDK (and no body at all from
// some callers): no change, 200 with the key as it is, dateUpdated kept.
func TestSDKUpdateWithoutArguments(t *testing.T) {
	h := newHarness(t)
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h.clock.Set(created)
	member := h.addKey(models.RoleMember)
	other := h.addKey(models.RoleMember)
	var k models.APIKey
	h.doJSON(http.MethodPost, h.keysPath(), member.Secret, map[string]any{"name": "ci"}, http.StatusCreated, &k)

	h.clock.Set(created.Add(time.Hour))
	for _, body := range []any{`{}`, ` `, nil} {
		var got models.APIKey
		h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), member.Secret, body, http.StatusOK, &got)
		if got.ID != k.ID || got.Name == nil || *got.Name != "ci" || !got.DateUpdated.Equal(k.DateUpdated) || got.Status != models.KeyActive {
			t.Errorf("PUT %q: %+v, want the key unchanged (name ci, dateUpdated %s)", body, got, k.DateUpdated)
		}
	}

	// The same permission checks as a rename: another member's key reads
	// as absent, and so does a key that does not exist.
	h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), other.Secret, `{}`, http.StatusNotFound, nil)

	// null still removes the name, and that is a change.
	var got models.APIKey
	h.doJSON(http.MethodPut, h.keysPath(k.ID.String()), member.Secret, `{"name": null}`, http.StatusOK, &got)
	if got.Name != nil || !got.DateUpdated.Equal(created.Add(time.Hour)) {
		t.Errorf("PUT {\"name\": null}: %+v, want no name and dateUpdated bumped", got)
	}
}
