package portal_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

const xss = `<script>alert(1)</script>`

// TestPortalInABrowser walks the portal as a webhook consumer would, in
// headless Chromium against the real API and worker and an HTTPS
// receiver: open the minted link, add an endpoint and copy its secret
// once, send a test event and see it arrive, see a failing endpoint's
// error and redeliver it (attempt 2), rotate a secret, and find that
// hostile text stays text, forms without the CSRF token and read-only
// sessions change nothing, another workspace's endpoint is not found, a
// link works once and an expired session is refused. Screenshots of each
// page go to bin/portal/.
func TestPortalInABrowser(t *testing.T) {
	// One attempt per event, so the failing endpoint's second attempt is
	// the redelivery's.
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{} })
	b := newBrowser(t, strings.TrimSuffix(env.BaseURL, "/v1"))
	ws := "/workspaces/" + env.WorkspaceID.String()
	mint := func(body map[string]any) models.PortalSessionCreated {
		var c models.PortalSessionCreated
		env.DoJSON(t, http.MethodPost, ws+"/portal-sessions", env.AdminKey, body, http.StatusCreated, &c)
		return c
	}

	// A link previewer's GET (a chat or mail fetching the link to show a
	// card) spends nothing: the link opens on a page with a button.
	link := mint(map[string]any{"expiresInSeconds": 3600, "applicationName": "Acme Cloud"})
	for range 2 {
		resp, err := http.Get(link.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 {
			t.Fatalf("a preview bot's GET of the link: %d, cookies %v", resp.StatusCode, resp.Cookies())
		}
	}
	// The link opens the portal and leaves the token out of the address.
	b.open(link.URL)
	b.h1("Open the webhook portal")
	if got := b.text(".brand"); !strings.Contains(got, "Acme Cloud") || !strings.Contains(got, "for Test workspace") {
		t.Errorf("the link's page does not say whose portal it opens: %q", got)
	}
	b.shot("00-open-link")
	b.submit(`main form[action="/portal/open"] button`)
	b.h1("Webhook endpoints")
	if got := b.text(".brand"); !strings.Contains(got, "Acme Cloud") || !strings.Contains(got, "for Test workspace") {
		t.Errorf("the portal does not say whose it is: %q", got)
	}
	if loc := b.location(); loc != b.base+"/portal/" {
		t.Errorf("after the link: %s, want %s/portal/", loc, b.base)
	}
	if c := eval[string](b, "document.cookie"); c != "" {
		t.Errorf("the session cookie is readable by scripts: %q", c)
	}
	b.shot("01-endpoints-empty")

	// A working endpoint: its secret is shown once, with a copy button.
	ok := rcv.Endpoint(false)
	okID, okSecret := createEndpoint(b, ok.URL(), "Orders service", "test.created")
	b.shot("02-secret-once")
	if err := ok.Trust(okSecret); err != nil {
		t.Fatal(err)
	}
	b.do(chromedp.Click(chromedp.CSS("button[data-copy]"), chromedp.NodeVisible))
	b.waitFor(`document.getElementById("copy-status").textContent !== ""`, 5*time.Second)
	b.submit(`a[href="/portal/endpoints/` + okID + `"]`)
	b.h1("Endpoint " + ok.URL())
	if strings.Contains(eval[string](b, "document.documentElement.outerHTML"), okSecret) {
		t.Error("the endpoint page shows the signing secret again")
	}

	// A test event arrives and shows as succeeded: the page reloads itself
	// until its attempt is there.
	b.submit("#send-test")
	b.waitFor(`!!document.querySelector("table.deliveries .ok") && !document.body.hasAttribute("data-refresh")`, 30*time.Second)
	if got := ok.Receipts(); len(got) != 1 {
		t.Errorf("the receiver verified %d events, want the test event", len(got))
	}
	b.shot("03-test-event-delivered")

	// A failing endpoint: its error shows as text; a redelivery is attempt 2.
	bad := rcv.EndpointAnswering(func(w http.ResponseWriter, _ *http.Request, _ int) int {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`receiver down: <b>maintenance</b>`))
		return http.StatusInternalServerError
	})
	badID, badSecret := createEndpoint(b, bad.URL(), "Billing (failing)", "test.created")
	if err := bad.Trust(badSecret); err != nil {
		t.Fatal(err)
	}
	b.open("/portal/endpoints/" + badID)
	b.submit("#send-test")
	b.reloadUntil(`!!document.querySelector("table.deliveries .bad")`, 30*time.Second)
	if got := b.text("table.deliveries .response"); got != "receiver down: <b>maintenance</b>" {
		t.Errorf("failing endpoint's response shows as %q", got)
	}
	if got := b.text("table.deliveries .status-code"); got != "500" {
		t.Errorf("status code shows as %q", got)
	}
	b.shot("04-failing-endpoint")
	// The page follows the redelivery, reloading itself until attempt 2
	// is there, then stops.
	b.submit(`table.deliveries button[aria-label^="Redeliver"]`)
	b.waitFor(`[...document.querySelectorAll("td.attempt")].some(td => td.textContent.trim() === "2") && !document.body.hasAttribute("data-refresh")`, 30*time.Second)
	b.shot("05-redelivered-attempt-2")

	// Recovering the failed deliveries of the last day shows its progress
	// and makes attempt 3.
	b.open("/portal/endpoints/" + badID)
	b.submit(`form[action$="/recover"] button`)
	b.h1("Recover failed deliveries")
	b.shot("05a-recover-confirmation")
	if got := b.text("#recover-count"); !strings.HasPrefix(got, "1 failed delivery") {
		t.Errorf("the recovery's confirmation says %q", got)
	}
	b.submit("#recover-confirm")
	b.reloadUntil(`(document.querySelector("#recovery + p") || {textContent: ""}).textContent.startsWith("completed: 1 of 1")`, 30*time.Second)
	b.reloadUntil(`[...document.querySelectorAll("td.attempt")].some(td => td.textContent.trim() === "3")`, 30*time.Second)
	b.shot("05b-recovered-attempt-3")

	// Every control has a label, and the keyboard reaches the skip link
	// first, which moves focus to the page's content.
	if unlabelled := eval[[]string](b, `[...document.querySelectorAll("input:not([type=hidden]), select, textarea, button")]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim()).map(e => e.outerHTML)`); len(unlabelled) > 0 {
		t.Errorf("controls without a label: %q", unlabelled)
	}
	b.do(chromedp.KeyEvent("\t"))
	if got := eval[string](b, `document.activeElement.textContent`); got != "Skip to content" {
		t.Errorf("the first Tab focuses %q, want the skip link", got)
	}
	b.do(chromedp.KeyEvent("\r"))
	b.waitFor(`document.activeElement.id === "main"`, 5*time.Second)
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Reload())
	b.shot("05c-endpoint-phone")
	b.do(chromedp.EmulateViewport(1280, 900))

	// Rotation shows the new secret once; deliveries verify with it.
	b.open("/portal/endpoints/" + okID)
	b.submit("#rotate")
	b.h1("Rotate the signing secret")
	b.do(chromedp.SetValue(chromedp.CSS("#gracePeriodHours"), "1"))
	b.submit("#rotate-confirm")
	b.h1("Signing secret rotated")
	rotated := eval[string](b, `document.getElementById("secret").value`)
	if !strings.HasPrefix(rotated, "whsec_") || rotated == okSecret {
		t.Fatalf("rotation shows %q", rotated)
	}
	b.shot("06-secret-rotated")
	if err := ok.Trust(rotated); err != nil {
		t.Fatal(err)
	}
	b.open("/portal/endpoints/" + okID)
	b.submit("#send-test")
	b.reloadUntil(`document.querySelectorAll("table.deliveries .ok").length === 1 && !!document.querySelector(".notice")`, 30*time.Second)
	if got := ok.Receipts(); len(got) != 2 {
		t.Errorf("after rotation the receiver verified %d events, want 2", len(got))
	}

	// Hostile text stays text: no dialog, no element made of it.
	quoted := `https://example.com/hook?q="x'y"&r=<i>x</i>`
	b.open("/portal/endpoints/new")
	b.do(chromedp.SetValue(chromedp.CSS("#url"), quoted), chromedp.SetValue(chromedp.CSS("#description"), xss),
		chromedp.Click(chromedp.CSS(`input[value="test.deleted"]`)), chromedp.Click(chromedp.CSS("#enabled")))
	b.submit(`form.stack button[type=submit]`)
	b.h1("Endpoint created")
	b.open("/portal/")
	b.h1("Webhook endpoints")
	if got := eval[[]string](b, `[...document.querySelectorAll(".description")].map(e => e.textContent)`); !contains(got, xss) {
		t.Errorf("descriptions %q: want %q as text", got, xss)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll("a.url")].map(e => e.textContent)`); !contains(got, quoted) {
		t.Errorf("urls %q: want %q as text", got, quoted)
	}
	if n := eval[int](b, `document.scripts.length + document.querySelectorAll("i").length`); n != 1 {
		t.Errorf("%d scripts and <i> elements, want only portal.js", n)
	}
	b.shot("07-endpoints")

	// Edit it, then delete it after the confirmation page.
	xssID := eval[string](b, `[...document.querySelectorAll("a.url")].find(a => a.textContent === `+jsString(quoted)+`).getAttribute("href").split("/").pop()`)
	b.open("/portal/endpoints/" + xssID + "/edit")
	b.h1("Edit endpoint")
	b.do(chromedp.SetValue(chromedp.CSS("#description"), "edited"), chromedp.SetValue(chromedp.CSS("#rateLimitPerSecond"), "7"))
	b.submit(`form.stack button[type=submit]`)
	b.waitFor(`document.querySelector(".notice") && document.querySelector(".details").textContent.includes("7 per second")`, 10*time.Second)
	b.submit(`a[href$="/delete"]`)
	b.h1("Delete endpoint")
	b.shot("07c-delete-confirmation")
	b.submit(`button.danger`)
	b.h1("Webhook endpoints")
	if n := eval[int](b, `document.querySelectorAll("a.url").length`); n != 2 || b.text(".notice") != "The endpoint was deleted." {
		t.Errorf("after deleting: %d endpoints listed, notice %q", n, b.text(".notice"))
	}
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Reload())
	b.shot("07b-endpoints-phone")
	b.do(chromedp.EmulateViewport(1280, 900))
	b.open("/portal/event-types")
	b.h1("Event types")
	b.shot("08-event-types")

	// A form without the CSRF token changes nothing.
	before := countSubscriptions(t, env)
	b.open("/portal/endpoints/new")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector("form.stack");
		f.querySelector('input[name="csrf"]').remove();
		f.querySelector("#url").value = "https://example.com/forged"; f.querySelector('input[value="test.created"]').checked = true;
		f.submit(); })()`))
	b.h1("Form refused")
	if after := countSubscriptions(t, env); after != before {
		t.Errorf("a form without its CSRF token made a subscription (%d, then %d)", before, after)
	}

	// Another workspace's endpoint is not found, exactly as in the API.
	other, err := env.Store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var theirs models.WebhookCreated
	env.DoJSON(t, http.MethodPost, "/workspaces/"+other.WorkspaceID.String()+"/webhooks", other.Secret,
		map[string]any{"url": "https://example.com/theirs", "eventTypes": []string{"test.created"}}, http.StatusCreated, &theirs)
	b.open("/portal/endpoints/" + theirs.ID.String())
	b.h1("Not found")
	if got := b.text(".message"); got != "This endpoint does not exist in this workspace: it may have been deleted." {
		t.Errorf("another workspace's endpoint: %q", got)
	}
	b.shot("09-other-workspace-not-found")

	// A link of that other workspace asks before replacing this session;
	// staying keeps it.
	var theirLink models.PortalSessionCreated
	env.DoJSON(t, http.MethodPost, "/workspaces/"+other.WorkspaceID.String()+"/portal-sessions", other.Secret, nil, http.StatusCreated, &theirLink)
	b.open(theirLink.URL)
	b.h1("You are signed in to Test workspace")
	if got := b.text("main .message"); !strings.Contains(got, "open Other instead?") {
		t.Errorf("the question reads %q", got)
	}
	// Its two answers stand apart: the button and the link that declines.
	if gap := eval[float64](b, `document.querySelector('main form[action="/portal/open"] a').getBoundingClientRect().left -
		document.querySelector('main form[action="/portal/open"] button').getBoundingClientRect().right`); gap < 16 {
		t.Errorf("%v px between \"Open Other\" and \"Stay in\", want at least 16", gap)
	}
	b.shot("09b-other-workspace-link-asks")
	b.submit(`main a[href="/portal/"]`)
	b.h1("Webhook endpoints")

	// The link works once.
	b.open(link.URL)
	b.h1("This link cannot be used")
	b.shot("10-link-used-twice")

	// A read-only session looks but cannot change, even with its token.
	b.openLink(mint(map[string]any{"readOnly": true}).URL)
	b.h1("Webhook endpoints")
	if n := eval[int](b, `document.querySelectorAll('a[href="/portal/endpoints/new"]').length`); n != 0 {
		t.Error("a read-only session is offered to add an endpoint")
	}
	b.open("/portal/endpoints/" + okID)
	b.shot("11-read-only")
	b.do(chromedp.Evaluate[chromedp.Void](`(() => { const f = document.createElement("form"); f.method = "post";
		f.action = "/portal/endpoints/` + okID + `/enabled";
		f.innerHTML = '<input name="enabled" value="false"><input name="csrf" value="' + document.querySelector('input[name="csrf"]').value + '">';
		document.body.append(f); f.submit(); })()`))
	b.h1("Read-only session")
	if sub, err := env.Store.Webhooks().Get(context.Background(), env.WorkspaceID, uuid.MustParse(okID)); err != nil || !sub.Enabled {
		t.Errorf("a read-only session disabled the endpoint (%v)", err)
	}

	// An expired session is refused.
	if _, err := env.DB.ExecContext(context.Background(), `UPDATE portal_sessions SET expires_at = now() WHERE workspace_id = ?`, env.WorkspaceID); err != nil {
		t.Fatal(err)
	}
	b.open("/portal/")
	b.h1("No portal session")
	b.shot("12-session-expired")

	if n := b.dialogs.Load(); n != 0 {
		t.Errorf("pages opened %d JavaScript dialogs", n)
	}
	if logs := env.Logs(); strings.Contains(logs, link.URL[strings.Index(link.URL, "olpt_"):]) || strings.Contains(logs, okSecret) {
		t.Error("the logs hold a portal token or a signing secret")
	}
}

// createEndpoint adds an endpoint through the portal's form and returns
// its id and the secret the page shows once.
func createEndpoint(b *browser, url, description, eventType string) (id, secret string) {
	b.t.Helper()
	b.open("/portal/")
	b.submit(`a[href="/portal/endpoints/new"]`)
	b.h1("Add an endpoint")
	b.do(chromedp.SetValue(chromedp.CSS("#url"), url), chromedp.SetValue(chromedp.CSS("#description"), description),
		chromedp.Click(chromedp.CSS(`input[value="`+eventType+`"]`)))
	b.submit(`form.stack button[type=submit]`)
	b.h1("Endpoint created")
	secret = eval[string](b, `document.getElementById("secret").value`)
	href := eval[string](b, `document.querySelector('main a[href^="/portal/endpoints/"]').getAttribute("href")`)
	if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(href, "/portal/endpoints/") {
		b.t.Fatalf("created: secret %q, link %q", secret, href)
	}
	return strings.TrimPrefix(href, "/portal/endpoints/"), secret
}

func countSubscriptions(t *testing.T, env *testenv.Env) int {
	t.Helper()
	var n int
	if err := env.DB.NewRaw(`SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = ?`, env.WorkspaceID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
