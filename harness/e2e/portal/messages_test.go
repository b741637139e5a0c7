package portal_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// TestPortalMessages: an event published through the API reaches an HTTPS
// receiver that verifies it; Messages lists it as succeeded, and its page
// shows the payload as text (a script in it stays text), the headers the
// receiver got (webhook-id, the attempt's webhook-timestamp, the custom
// headers, the sensitive one masked) and no secret.
func TestPortalMessages(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{} })
	b := newBrowser(t, strings.TrimSuffix(env.BaseURL, "/v1"))
	openPortal(t, env, b)

	// The receiver keeps the headers of the request it answers.
	var (
		mu  sync.Mutex
		got http.Header
	)
	ep := rcv.EndpointAnswering(func(w http.ResponseWriter, r *http.Request, _ int) int {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	})
	id, secret := createEndpoint(b, ep.URL(), "Messages", "test.created")
	if err := ep.Trust(secret); err != nil {
		t.Fatal(err)
	}
	const apiKey = "gw_live_51be0c9d"
	ws := "/workspaces/" + env.WorkspaceID.String()
	env.DoJSON(t, http.MethodPut, ws+"/webhooks/"+id, env.AdminKey, map[string]any{
		"headers": map[string]string{"X-Api-Key": apiKey, "X-Tenant": "acme"}, "sensitiveHeaders": []string{"X-Api-Key"},
	}, http.StatusOK, nil)

	hostile := `</script><script>alert(1)</script>`
	var acc models.EventAccepted
	env.DoJSON(t, http.MethodPost, ws+"/events", env.AdminKey, map[string]any{"type": "test.created", "data": map[string]any{"note": hostile}},
		http.StatusAccepted, &acc)
	event := acc.ID.String()
	deadline := time.Now().Add(30 * time.Second)
	for ep.Got(event).Completed2xx == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the receiver did not verify event %s in 30 s", event)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	sent := got
	mu.Unlock()
	if sent.Get("X-Tenant") != "acme" || sent.Get("X-Api-Key") != apiKey {
		t.Fatalf("the receiver got custom headers %v", sent)
	}

	// Messages, from the navigation: the event, succeeded.
	b.submit(`nav a[href="/portal/messages"]`)
	b.h1("Messages")
	b.reloadUntil(`!!document.querySelector('a[href="/portal/messages/`+event+`"]') && !!document.querySelector("table.messages .ok")`, 30*time.Second)
	b.shot("21-messages")

	// The event's page: payload as text, the headers the receiver got.
	b.submit(`a[href="/portal/messages/` + event + `"]`)
	b.h1("Message " + event)
	if got := b.text("#payload-text"); !strings.Contains(got, `"note": "`+hostile+`"`) || !strings.Contains(got, `"type": "test.created"`) {
		t.Errorf("the payload shows as %q", got)
	}
	if n := eval[int](b, `document.scripts.length`); n != 1 {
		t.Errorf("the page has %d scripts, want only portal.js: the payload ran as markup", n)
	}
	if got := b.text("table.request-headers"); !strings.Contains(got, "webhook-id") || !strings.Contains(got, sent.Get("webhook-id")) || !strings.Contains(got, "Signatures are not stored") {
		t.Errorf("the headers table reads %q, want webhook-id %s", got, sent.Get("webhook-id"))
	}
	if got := b.text(`td[data-label="webhook-timestamp"]`); got != sent.Get("webhook-timestamp") {
		t.Errorf("the attempt's webhook-timestamp shows as %q, the receiver got %q", got, sent.Get("webhook-timestamp"))
	}
	headers := b.text(".card .headers")
	if !strings.Contains(headers, "X-Tenant: acme") || !strings.Contains(headers, "X-Api-Key: "+models.WebhookHeaderMask) {
		t.Errorf("custom headers show as %q", headers)
	}
	html := eval[string](b, "document.documentElement.outerHTML")
	for _, s := range []string{secret, apiKey, sent.Get("webhook-signature")} {
		if s == "" || strings.Contains(html, s) {
			t.Errorf("the message page shows %q", s)
		}
	}
	b.shot("22-message")
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Reload())
	b.h1("Message " + event)
	b.shot("22a-message-phone")
	b.do(chromedp.EmulateViewport(1280, 900))

	// The endpoint's attempt row leads to the same page.
	b.open("/portal/endpoints/" + id)
	b.submit(`table.deliveries a[href="/portal/messages/` + event + `"]`)
	b.h1("Message " + event)
}
