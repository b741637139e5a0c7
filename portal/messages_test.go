package portal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// messagesFixture is a workspace with two endpoints (the first with a
// plain and a sensitive custom header) and a way to publish through the API.
type messagesFixture struct {
	h            *harness
	b            *browser
	first, other models.WebhookCreated
}

const sensitiveValue = "gw_secret_51be0c"

func newMessagesFixture(t *testing.T) *messagesFixture {
	h := newHarness(t)
	f := &messagesFixture{h: h}
	hooks := "/v1/workspaces/" + h.admin.WorkspaceID.String() + "/webhooks"
	h.api(http.MethodPost, hooks, map[string]any{
		"url": "https://example.com/first", "eventTypes": []string{"test.created"},
		"headers": map[string]string{"X-Api-Key": sensitiveValue, "X-Tenant": "acme"}, "sensitiveHeaders": []string{"X-Api-Key"},
	}, http.StatusCreated, &f.first)
	h.api(http.MethodPost, hooks, map[string]any{"url": "https://example.com/other", "eventTypes": []string{"test.created", "test.deleted"}},
		http.StatusCreated, &f.other)
	f.b = h.opened(nil)
	return f
}

// publish sends an event through the API.
func (f *messagesFixture) publish(typ models.EventType, data any) uuid.UUID {
	f.h.t.Helper()
	var acc models.EventAccepted
	f.h.api(http.MethodPost, "/v1/workspaces/"+f.h.admin.WorkspaceID.String()+"/events", map[string]any{"type": typ, "data": data},
		http.StatusAccepted, &acc)
	return acc.ID
}

// attempt records an attempt as the worker would.
func (f *messagesFixture) attempt(sub, event uuid.UUID, n int, ok bool, code int, body string, at time.Time) {
	f.h.t.Helper()
	d := models.WebhookDelivery{ID: uuid.New(), SubscriptionID: sub, EventID: event, AttemptNumber: n, Success: ok,
		StatusCode: &code, ResponseBody: body, ResponseTimeMs: 12, DateCreated: at}
	if !ok {
		msg := "receiver answered " + strconv.Itoa(code)
		d.ErrorMessage = &msg
	}
	if _, _, err := f.h.store.Deliveries().Record(context.Background(), d); err != nil {
		f.h.t.Fatal(err)
	}
}

// The Messages page lists the workspace's events newest first with each
// endpoint's status, narrowed by endpoint, type, outcome and time.
func TestPortalMessagesListFilters(t *testing.T) {
	f := newMessagesFixture(t)
	created := f.publish(models.EventTestCreated, map[string]any{"n": 1})
	deleted := f.publish(models.EventTestDeleted, map[string]any{"n": 2})
	f.attempt(f.first.ID, created, 1, true, 200, "ok", time.Now())

	rec := f.b.do(http.MethodGet, "/portal/messages", nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `href="/portal/messages"`) ||
		!strings.Contains(body, "/portal/messages/"+created.String()) || !strings.Contains(body, "/portal/messages/"+deleted.String()) ||
		strings.Index(body, deleted.String()) > strings.Index(body, created.String()) {
		t.Fatalf("messages: %d, want both events, newest first:\n%s", rec.Code, body)
	}
	if !strings.Contains(body, "https://example.com/first</span>: <span class=\"ok\">succeeded</span> after 1 attempt") {
		t.Errorf("the first endpoint's status is not shown:\n%s", body)
	}

	q := func(query string) string { return "/portal/messages?" + query }
	for _, c := range []struct {
		query    string
		has, not []uuid.UUID
	}{
		{"type=test.deleted", []uuid.UUID{deleted}, []uuid.UUID{created}},
		{"endpoint=" + f.first.ID.String(), []uuid.UUID{created}, []uuid.UUID{deleted}},
		{"status=succeeded", []uuid.UUID{created}, []uuid.UUID{deleted}},
		{"status=pending&endpoint=" + f.other.ID.String(), []uuid.UUID{created, deleted}, nil},
		{"status=failed", nil, []uuid.UUID{created, deleted}},
		{"since=" + url.QueryEscape(time.Now().UTC().Add(time.Hour).Format("2006-01-02 15:04")), nil, []uuid.UUID{created, deleted}},
		{"until=" + time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04"), []uuid.UUID{created, deleted}, nil},
		{"endpoint=" + uuid.NewString(), nil, []uuid.UUID{created, deleted}},
	} {
		rec := f.b.do(http.MethodGet, q(c.query), nil)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", c.query, rec.Code)
		}
		for _, id := range c.has {
			if !strings.Contains(body, "/portal/messages/"+id.String()) {
				t.Errorf("%s: %s missing", c.query, id)
			}
		}
		for _, id := range c.not {
			if strings.Contains(body, "/portal/messages/"+id.String()) {
				t.Errorf("%s: %s listed", c.query, id)
			}
		}
		if len(c.has) == 0 && !strings.Contains(body, "No events match the filter") {
			t.Errorf("%s: no word that nothing matched", c.query)
		}
	}

	// Filters the page cannot read are named by their labels.
	rec = f.b.do(http.MethodGet, q("status=bogus&since=yesterday&type=nope&endpoint=x"), nil)
	body = rec.Body.String()
	for _, label := range []string{"Outcome</a>", "Since</a>", "Event type</a>", "Endpoint</a>"} {
		if rec.Code != http.StatusBadRequest || !strings.Contains(body, label) {
			t.Errorf("bad filters: %d, %q not named:\n%s", rec.Code, label, body)
		}
	}
	// Year 0000 an hour east of UTC is year -1 in UTC, which PostgreSQL
	// refuses: a 400 for the filter, not a 500.
	for _, since := range []string{"0000-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"} {
		if rec = f.b.do(http.MethodGet, q("since="+url.QueryEscape(since)), nil); rec.Code != http.StatusBadRequest {
			t.Errorf("since %s: %d, want 400", since, rec.Code)
		}
	}
}

// Messages are paged 25 at a time, and a page past the end leads back.
func TestPortalMessagesPages(t *testing.T) {
	f := newMessagesFixture(t)
	for i := range 26 {
		f.publish(models.EventTestDeleted, map[string]any{"n": i})
	}
	rec := f.b.do(http.MethodGet, "/portal/messages", nil)
	body := rec.Body.String()
	if n := strings.Count(body, `href="/portal/messages/`); rec.Code != http.StatusOK || n != 25 ||
		!strings.Contains(body, "Page 1 of 2") || !strings.Contains(body, `href="?page=2" rel="next">Older`) {
		t.Fatalf("page 1: %d, %d events:\n%s", rec.Code, n, body)
	}
	rec = f.b.do(http.MethodGet, "/portal/messages?type=test.deleted&page=2", nil)
	if n := strings.Count(rec.Body.String(), `href="/portal/messages/`); n != 1 || !strings.Contains(rec.Body.String(), `rel="prev">Newer`) {
		t.Errorf("page 2: %d events:\n%s", n, rec.Body)
	}
	rec = f.b.do(http.MethodGet, "/portal/messages?type=test.deleted&page=99", nil)
	if !strings.Contains(rec.Body.String(), "There is no page 99") || !strings.Contains(rec.Body.String(), `href="?page=2&amp;type=test.deleted"`) {
		t.Errorf("past the end:\n%s", rec.Body)
	}
}

// An event's page shows its payload as text, the headers its attempts
// carried and every attempt per endpoint, and no secret.
func TestPortalMessagePage(t *testing.T) {
	f := newMessagesFixture(t)
	xss := `</script><script>alert(1)</script>`
	id := f.publish(models.EventTestCreated, map[string]any{"note": xss, "n": 1})
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	f.attempt(f.first.ID, id, 1, false, 500, "<b>down</b>", at)
	f.attempt(f.first.ID, id, 2, true, 200, "ok", at.Add(time.Minute))

	rec := f.b.do(http.MethodGet, "/portal/messages/"+id.String(), nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("message: %d %s", rec.Code, body)
	}
	for _, want := range []string{
		`&#34;type&#34;: &#34;test.created&#34;`, // pretty-printed, escaped
		`&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;`,
		"<code>" + id.String() + "</code> (the event id", // webhook-id
		">" + strconv.FormatInt(at.Unix(), 10) + "<",     // webhook-timestamp of attempt 1
		">" + strconv.FormatInt(at.Add(time.Minute).Unix(), 10) + "<",
		"X-Tenant: acme", "X-Api-Key: " + models.WebhookHeaderMask,
		"webhook-signature", "Signatures are not stored", "standardwebhooks",
		"&lt;b&gt;down&lt;/b&gt;", "2 attempts, newest first", "https://example.com/other", "No attempt yet.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("message page lacks %q", want)
		}
	}
	for _, secret := range []string{xss, sensitiveValue, f.first.Secret, f.other.Secret, "<b>down</b>"} {
		if strings.Contains(body, secret) {
			t.Errorf("message page shows %q", secret)
		}
	}

	// Attempt rows of the endpoint's page lead to the event's page.
	if rec := f.b.do(http.MethodGet, "/portal/endpoints/"+f.first.ID.String(), nil); !strings.Contains(rec.Body.String(), `href="/portal/messages/`+id.String()+`"`) {
		t.Errorf("the endpoint's attempts do not link to the message:\n%s", rec.Body)
	}
}

// A payload past 64 KB is cut, with a note.
func TestPortalMessagePayloadCut(t *testing.T) {
	f := newMessagesFixture(t)
	ev, err := f.h.store.Events().Create(context.Background(), models.NewEvent{WorkspaceID: f.h.admin.WorkspaceID, Type: models.EventTestCreated,
		Data: json.RawMessage(`{"big":"` + strings.Repeat("é", 40<<10) + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec := f.b.do(http.MethodGet, "/portal/messages/"+ev.ID.String(), nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `id="payload-cut"`) || strings.Count(body, "é") > 64<<10/2 {
		t.Errorf("big payload: %d, cut note %v, %d characters shown", rec.Code, strings.Contains(body, "payload-cut"), strings.Count(body, "é"))
	}
}

// Another workspace's event, and an id that is none, are the portal's 404,
// leading back to the messages.
func TestPortalMessageOfAnotherWorkspace(t *testing.T) {
	f := newMessagesFixture(t)
	theirs, err := f.h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := f.h.store.Events().Create(context.Background(), models.NewEvent{WorkspaceID: theirs.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{"theirs":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/portal/messages/" + ev.ID.String(), "/portal/messages/not-an-id"} {
		rec := f.b.do(http.MethodGet, path, nil)
		body := rec.Body.String()
		if rec.Code != http.StatusNotFound || !strings.Contains(body, `href="/portal/messages" class="back"`) ||
			strings.Contains(body, "theirs") || rec.Header().Get("Content-Security-Policy") == "" {
			t.Errorf("%s: %d, want the portal's 404 leading back:\n%s", path, rec.Code, body)
		}
	}
	if rec := f.b.do(http.MethodGet, "/portal/messages", nil); strings.Contains(rec.Body.String(), ev.ID.String()) {
		t.Error("the list shows another workspace's event")
	}
}

// The Messages page counts at most store.MessagesCountCap events and its
// pages reach no further: past them it leads back to the last page.
func TestPortalMessagesCountCapped(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	ctx := context.Background()
	ev, err := h.store.Events().Create(ctx, models.NewEvent{WorkspaceID: h.admin.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.DB().ExecContext(ctx, `INSERT INTO events SELECT (jsonb_populate_record(e, jsonb_build_object(
			'id', gen_random_uuid(), 'date_created', e.date_created - make_interval(secs => g)))).*
		FROM events AS e, generate_series(1, ?) AS g WHERE e.id = ?`, store.MessagesCountCap+4, ev.ID); err != nil {
		t.Fatal(err)
	}
	body := b.do(http.MethodGet, "/portal/messages", nil).Body.String()
	if !strings.Contains(body, "<caption>More than 10,000 events</caption>") || !strings.Contains(body, "<span>Page 1 of 400</span>") ||
		!strings.Contains(body, "The pages reach the newest 10,000 events") {
		t.Errorf("capped count not shown: %s", body)
	}
	rec := b.do(http.MethodGet, "/portal/messages?page=401", nil)
	if body := rec.Body.String(); !strings.Contains(body, "There is no page 401: the list has 400 pages") || !strings.Contains(body, `href="?page=400"`) {
		t.Errorf("page past the cap: %d %s", rec.Code, body)
	}
}
