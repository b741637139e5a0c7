package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// The endpoint page shows custom headers, the sensitive value masked, and
// the portal's edit form leaves them as they are.
func TestPortalEndpointShowsHeaders(t *testing.T) {
	h := newHarness(t)
	const key = "gw_secret_51be0c"
	var created models.WebhookCreated
	h.api(http.MethodPost, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/webhooks", map[string]any{
		"url": "https://example.com/hook", "eventTypes": []string{"test.created"},
		"headers": map[string]string{"X-Api-Key": key, "X-Tenant": "acme"}, "sensitiveHeaders": []string{"X-Api-Key"},
	}, http.StatusCreated, &created)
	b := h.opened(nil)
	page := "/portal/endpoints/" + created.ID.String()
	rec := b.do(http.MethodGet, page, nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, "X-Tenant: acme") || !strings.Contains(body, "X-Api-Key: "+models.WebhookHeaderMask) ||
		strings.Contains(body, key) {
		t.Fatalf("endpoint page: %d, headers not shown as they should be:\n%s", rec.Code, body)
	}

	if rec := b.post(page, url.Values{"url": {"https://example.com/v2"}, "eventTypes": {"test.created"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("edit: %d %s", rec.Code, rec.Body)
	}
	sub, err := h.store.Webhooks().Get(context.Background(), h.admin.WorkspaceID, created.ID)
	if err != nil || len(sub.Headers) != 2 || len(sub.SensitiveHeaders) != 1 {
		t.Fatalf("after a portal edit: %+v (%v)", sub, err)
	}
}
