package portal_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// openPortal mints a link for env's workspace and opens it in b.
func openPortal(t *testing.T, env *testenv.Env, b *browser) {
	t.Helper()
	var c models.PortalSessionCreated
	env.DoJSON(t, http.MethodPost, "/workspaces/"+env.WorkspaceID.String()+"/portal-sessions", env.AdminKey, map[string]any{"expiresInSeconds": 3600}, http.StatusCreated, &c)
	b.openLink(c.URL)
	b.h1("Webhook endpoints")
}

// TestPortalFormsSafeToSubmitTwice: a double-click on "Create endpoint"
// makes one endpoint and leads to its secret; reloading that page shows the
// secret no more and creates nothing; a rotation sent twice rotates once,
// so the receiver's old secret still verifies during the grace period.
func TestPortalFormsSafeToSubmitTwice(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{} })
	b := newBrowser(t, strings.TrimSuffix(env.BaseURL, "/v1"))
	openPortal(t, env, b)

	// A double-click: the second click's POST goes out while the first's
	// navigation is under way (Chromium cancels it and follows the
	// second). Whether the first reached the server depends on timing, so
	// the test tries a few gaps until the server has seen both.
	var id string
	twice := false
	for _, gap := range []int{20, 60, 5, 150} {
		b.open("/portal/endpoints/new")
		b.h1("Add an endpoint")
		b.do(chromedp.SetValue(chromedp.CSS("#url"), "https://example.com/double-click"), chromedp.Click(chromedp.CSS(`input[value="test.created"]`)))
		before, posts := countSubscriptions(t, env), strings.Count(env.Logs(), "method=POST route=/portal/endpoints ")
		b.do(chromedp.Evaluate[chromedp.Void](`(() => { const button = document.querySelector("form.stack button[type=submit]");
			button.click(); setTimeout(() => button.click(), ` + strconv.Itoa(gap) + `); })()`))
		b.waitFor(`(document.querySelector("h1") || {}).textContent === "Endpoint created"`, 15*time.Second)
		time.Sleep(300 * time.Millisecond) // a first request still running settles
		if n := countSubscriptions(t, env); n != before+1 {
			t.Fatalf("a double-click (gap %d ms) made %d endpoints, want 1", gap, n-before)
		}
		// The page shows the secret unless the abandoned first navigation
		// had already loaded (and so spent) it: then it says to rotate.
		if eval[int](b, `document.querySelectorAll("#secret, #secret-shown").length`) != 1 {
			t.Errorf("after a double-click (gap %d ms) the page shows neither the secret nor why not: %s", gap, b.text("main"))
		}
		id = strings.TrimPrefix(eval[string](b, `document.querySelector('main a[href^="/portal/endpoints/"]').getAttribute("href")`), "/portal/endpoints/")
		if n := strings.Count(env.Logs(), "method=POST route=/portal/endpoints ") - posts; n >= 2 {
			t.Logf("a double-click %d ms apart reached the server %d times and made one endpoint", gap, n)
			twice = true
			break
		}
	}
	if !twice {
		t.Fatal("no double-click reached the server twice: the test proved nothing")
	}
	b.shot("13-created-after-double-click")

	// Reloading the page of the secret shows it no more and creates nothing.
	before := countSubscriptions(t, env)
	b.do(chromedp.Reload())
	b.h1("Endpoint created")
	if n := eval[int](b, `document.querySelectorAll("#secret").length`); n != 0 || b.text("#secret-shown") == "" {
		t.Error("reloading the created page shows the secret again, or does not say why not")
	}
	if n := countSubscriptions(t, env); n != before {
		t.Errorf("reloading the created page made %d endpoints", n-before)
	}
	if loc := b.location(); !strings.HasSuffix(loc, "/portal/endpoints/"+id+"/created") {
		t.Errorf("after creating, the address is %s", loc)
	}
	b.shot("14-created-reloaded")

	// A rotation sent twice (the same form, twice at once) rotates once:
	// deliveries stay signed with the secret the receiver has.
	ok := rcv.Endpoint(false)
	id, created := createEndpoint(b, ok.URL(), "Rotated twice", "test.created")
	if err := ok.Trust(created); err != nil {
		t.Fatal(err)
	}
	b.open("/portal/endpoints/" + id)
	b.submit("#rotate")
	b.h1("Rotate the signing secret")
	b.shot("15-rotate-confirmation")
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	types, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => { const f = document.querySelector('form[action$="/rotate"]');
		const body = new URLSearchParams(new FormData(f));
		const send = () => fetch(f.action, {method: "POST", body, redirect: "manual"});
		return (await Promise.all([send(), send()])).map(r => r.type).join(","); })()`, chromedp.EvalAwaitPromise))
	if err != nil || types != "opaqueredirect,opaqueredirect" {
		t.Fatalf("the rotation sent twice answered %q (%v), want two redirects", types, err)
	}
	b.open("/portal/endpoints/" + id + "/rotated")
	b.h1("Signing secret rotated")
	if got := b.text("main"); !strings.Contains(got, "for another 24 hours") {
		t.Errorf("the rotated page does not give the grace period in words: %s", got)
	}
	b.shot("16-secret-rotated-once")
	b.open("/portal/endpoints/" + id)
	b.submit("#send-test")
	b.waitFor(`!!document.querySelector("table.deliveries .ok") && !document.body.hasAttribute("data-refresh")`, 30*time.Second)
	if got := ok.Receipts(); len(got) != 1 {
		t.Errorf("after a rotation sent twice the receiver verified %d events with its old secret, want 1", len(got))
	}
}

// TestPortalErrorsLeadBack: error pages are portal pages that lead back
// to where the person was.
func TestPortalErrorsLeadBack(t *testing.T) {
	env := testenv.Start(t)
	b := newBrowser(t, strings.TrimSuffix(env.BaseURL, "/v1"))
	openPortal(t, env, b)
	id, _ := createEndpoint(b, "https://example.com/hook", "Orders", "test.created")

	// A form's address opened as a page.
	b.open("/portal/endpoints/" + id + "/test")
	b.h1("Not a page")
	b.shot("17-not-a-page")
	b.submit("a.back")
	b.h1("Endpoint https://example.com/hook")

	// A disabled endpoint offers no test event and says how to enable it.
	b.submit(`form[action$="/enabled"] button`)
	b.waitFor(`!!document.getElementById("disabled-note")`, 10*time.Second)
	if n := eval[int](b, `document.querySelectorAll("#send-test").length`); n != 0 {
		t.Error("a disabled endpoint offers to send a test event")
	}
	b.shot("18-disabled-endpoint")
	b.submit("#enable")
	b.waitFor(`!!document.getElementById("send-test")`, 10*time.Second)

	// A recovery from before the retention explains itself and leads back.
	b.do(chromedp.SetValue(chromedp.CSS("#since"), "2000-01-01 00:00"))
	b.submit(`form[action$="/recover"] button`)
	b.h1("Recover failed deliveries")
	if got := b.text("#since-error"); !strings.Contains(got, "kept for 90 days") {
		t.Errorf("a recovery from 2000: %q", got)
	}
	b.shot("19-recover-outside-retention")
	b.submit("a.back")
	b.h1("Endpoint https://example.com/hook")

	// A page past the end of the list leads back to it.
	b.open("/portal/endpoints/" + id + "?page=999999999")
	b.submit(`nav.pages a`)
	if loc := b.location(); !strings.HasSuffix(loc, "?page=1") {
		t.Errorf("the way back from page 999999999 leads to %s", loc)
	}

	// An unknown address, and the end of the session.
	b.open("/portal/no/such/page")
	b.h1("Page not found")
	b.submit("a.back")
	b.h1("Webhook endpoints")
	b.submit(`form[action="/portal/logout"] button`)
	b.h1("Session ended")
	if n := eval[int](b, `document.querySelectorAll("nav, form").length`); n != 0 {
		t.Errorf("the session ended page shows %d navigation bars or forms", n)
	}
	b.shot("20-session-ended")
	if n := b.dialogs.Load(); n != 0 {
		t.Errorf("pages opened %d JavaScript dialogs", n)
	}
}
