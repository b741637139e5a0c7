package portal_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// A v1a endpoint's page shows its public key, and during a rotation's
// grace period the previous one too; a v1 endpoint's page shows no key.
func TestPortalEndpointShowsPublicKey(t *testing.T) {
	h := newHarness(t)
	hooks := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/webhooks"
	var v1a, v1 models.WebhookCreated
	h.api(http.MethodPost, hooks, map[string]any{"url": "https://example.com/a", "eventTypes": []string{"test.created"}, "signatureScheme": "v1a"},
		http.StatusCreated, &v1a)
	h.api(http.MethodPost, hooks, map[string]any{"url": "https://example.com/b", "eventTypes": []string{"test.created"}}, http.StatusCreated, &v1)
	b := h.opened(nil)
	// html/template writes a key's + as &#43;.
	page := func(id string) string {
		return html.UnescapeString(b.do(http.MethodGet, "/portal/endpoints/"+id, nil).Body.String())
	}

	body := page(v1a.ID.String())
	if !strings.Contains(body, `<code id="public-key">`+v1a.PublicKey+`</code>`) || strings.Contains(body, "previous-public-key") {
		t.Fatalf("v1a endpoint page does not show its public key %s:\n%s", v1a.PublicKey, body)
	}
	var rotated models.WebhookSecretRotated
	h.api(http.MethodPost, hooks+"/"+v1a.ID.String()+"/secret/rotate", map[string]any{"gracePeriodHours": 2}, http.StatusOK, &rotated)
	body = page(v1a.ID.String())
	if !strings.Contains(body, `<code id="public-key">`+rotated.PublicKey+`</code>`) ||
		!strings.Contains(body, `<code id="previous-public-key">`+v1a.PublicKey+`</code>`) {
		t.Fatalf("after a rotation the page does not show both keys:\n%s", body)
	}

	body = page(v1.ID.String())
	if strings.Contains(body, "whpk_") || !strings.Contains(body, "HMAC-SHA256") {
		t.Fatalf("v1 endpoint page:\n%s", body)
	}
}
