package portal_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// countRows counts a table's rows.
func (h *harness) countRows(table string) int {
	h.t.Helper()
	var n int
	if err := h.store.DB().NewRaw(`SELECT count(*) FROM `+table).Scan(context.Background(), &n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// A create form sent twice with its page's one-time token, one after the
// other and at the same moment, makes one endpoint; every submission
// leads to the same page, which shows the secret once, from a stash that
// holds it sealed.
func TestPortalCreateSubmittedTwiceCreatesOnce(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	b.do(http.MethodGet, "/portal/endpoints/new", nil)
	form := url.Values{"csrf": {b.csrf}, "once": {b.once}, "url": {"https://example.com/hook"}, "eventTypes": {"test.created"}, "enabled": {"true"}}

	var (
		wg   sync.WaitGroup
		recs [3]*httptest.ResponseRecorder
	)
	for i := range 2 { // a double-click: both at once
		wg.Go(func() { recs[i] = b.send(http.MethodPost, "/portal/endpoints", form) })
	}
	wg.Wait()
	recs[2] = b.send(http.MethodPost, "/portal/endpoints", form) // a reload, later
	if n := h.countRows("webhook_subscriptions"); n != 1 {
		t.Fatalf("%d endpoints after one form sent three times, want 1", n)
	}
	loc := recs[0].Header().Get("Location")
	for i, rec := range recs {
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != loc || !createdLink.MatchString(loc) {
			t.Errorf("submission %d: %d to %q, want 303 to the first one's %q", i+1, rec.Code, rec.Header().Get("Location"), loc)
		}
	}

	var sealed []byte
	if err := h.store.DB().NewRaw(`SELECT sealed_secret FROM portal_secret_stash`).Scan(context.Background(), &sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("whsec_")) {
		t.Error("the stash holds the secret in clear")
	}
	// The rotated page of the same endpoint is not the created page: it
	// neither shows nor spends the created secret.
	rotated := b.do(http.MethodGet, strings.TrimSuffix(loc, "/created")+"/rotated", nil).Body.String()
	if strings.Contains(rotated, "whsec_") {
		t.Fatalf("the rotated page shows the created endpoint's secret: %s", rotated)
	}
	page := b.do(http.MethodGet, loc, nil).Body.String()
	if !strings.Contains(page, `value="whsec_`) {
		t.Fatalf("the created page does not show the secret: %s", page)
	}
	again := b.do(http.MethodGet, loc, nil).Body.String()
	if strings.Contains(again, "whsec_") || !strings.Contains(again, `id="secret-shown"`) {
		t.Errorf("reloading the created page shows the secret again, or does not say why not: %s", again)
	}
	if n := h.countRows("portal_secret_stash"); n != 0 {
		t.Errorf("%d stashed secrets after the page read them", n)
	}
}

// Rotating twice with one page's token (a double-click, a reload) rotates
// once: the secret the receiver verifies with keeps signing through the
// grace period, instead of being replaced by the first rotation's new one.
func TestPortalRotateSubmittedTwiceRotatesOnce(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	id := uuid.MustParse(b.createEndpoint())
	before, err := h.store.Webhooks().Target(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	page := b.do(http.MethodGet, "/portal/endpoints/"+id.String()+"/rotate", nil)
	if page.Code != http.StatusOK || strings.Contains(page.Body.String(), `id="grace-running"`) {
		t.Fatalf("rotate confirmation: %d %s", page.Code, page.Body)
	}
	form := url.Values{"csrf": {b.csrf}, "once": {b.once}, "gracePeriodHours": {"24"}}
	first := b.send(http.MethodPost, "/portal/endpoints/"+id.String()+"/rotate", form)
	second := b.send(http.MethodPost, "/portal/endpoints/"+id.String()+"/rotate", form)
	if first.Code != http.StatusSeeOther || second.Code != http.StatusSeeOther || first.Header().Get("Location") != second.Header().Get("Location") {
		t.Fatalf("rotate twice: %d %q, then %d %q", first.Code, first.Header().Get("Location"), second.Code, second.Header().Get("Location"))
	}
	after, err := h.store.Webhooks().Target(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after.PreviousSecretCiphertext, before.SecretCiphertext) || after.PreviousSecretExpiresAt == nil ||
		time.Until(*after.PreviousSecretExpiresAt) < 23*time.Hour {
		t.Errorf("after a rotation sent twice the previous secret is not the original one for 24 hours (expires %v)", after.PreviousSecretExpiresAt)
	}
	rotated := b.follow(second).Body.String()
	if !strings.Contains(rotated, `value="whsec_`) || !strings.Contains(rotated, "for another 24 hours, until") {
		t.Errorf("rotated page: %s", rotated)
	}
	// Rotating again on purpose is offered with a warning: it would end
	// the previous secret's grace period.
	if body := b.do(http.MethodGet, "/portal/endpoints/"+id.String()+"/rotate", nil).Body.String(); !strings.Contains(body, `id="grace-running"`) ||
		!strings.Contains(body, "another 24 hours") {
		t.Errorf("the confirmation does not warn of the running grace period: %s", body)
	}
}

// A form without its one-time token changes nothing; one refused by the
// rules gives its token back, so the corrected form goes through.
func TestPortalFormsNeedAOneTimeToken(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	form := url.Values{"csrf": {b.csrf}, "url": {"https://example.com/hook"}, "eventTypes": {"test.created"}}
	if rec := b.send(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusForbidden {
		t.Errorf("without a one-time token: %d, want 403", rec.Code)
	}
	form.Set("once", "one-page-s-token-0001")
	form.Set("url", "http://example.com/hook")
	if rec := b.send(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusBadRequest {
		t.Fatalf("an invalid form: %d, want 400", rec.Code)
	}
	form.Set("url", "https://example.com/hook")
	if rec := b.send(http.MethodPost, "/portal/endpoints", form); rec.Code != http.StatusSeeOther {
		t.Errorf("the corrected form with the same token: %d, want 303: %s", rec.Code, rec.Body)
	}
	if n := h.countRows("webhook_subscriptions"); n != 1 {
		t.Errorf("%d endpoints, want 1", n)
	}
}

// A secret not yet shown goes with the session: ending it deletes the stash.
func TestPortalStashEndsWithTheSession(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	b.createEndpoint()
	if n := h.countRows("portal_secret_stash"); n != 1 {
		t.Fatalf("%d stashed secrets after a create, want 1", n)
	}
	if rec := b.post("/portal/logout", nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/portal/ended" {
		t.Fatalf("logout: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if n := h.countRows("portal_secret_stash") + h.countRows("portal_form_submissions"); n != 0 {
		t.Errorf("%d stash and token rows outlive the session", n)
	}
	if n := h.countRows("webhook_subscriptions"); n != 1 {
		t.Errorf("%d endpoints, want the one made", n)
	}
}
