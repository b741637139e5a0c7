package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// publishAt publishes an event through the API and moves its creation
// time to at.
func (h *harness) publishAt(typ string, at time.Time) uuid.UUID {
	h.t.Helper()
	var acc models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": typ, "data": map[string]any{"at": at.Format(time.RFC3339)}}, http.StatusAccepted, &acc)
	h.exec(`UPDATE events SET date_created = ? WHERE id = ?`, at, acc.ID)
	return acc.ID
}

func (h *harness) listEvents(query string) (models.Page[models.EventDetail], []json.RawMessage) {
	h.t.Helper()
	rec := h.do(http.MethodGet, h.eventsPath()+query, h.admin.Secret, nil)
	if rec.Code != http.StatusOK {
		h.t.Fatalf("GET events%s: %d %s", query, rec.Code, rec.Body)
	}
	var page models.Page[models.EventDetail]
	var raw struct {
		Items []json.RawMessage `json:"items"`
	}
	hookDecode(h.t, rec.Body.Bytes(), &page)
	hookDecode(h.t, rec.Body.Bytes(), &raw)
	return page, raw.Items
}

func TestEventsList(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	a := h.publishAt("test.created", base)
	b := h.publishAt("test.deleted", base.Add(time.Hour))
	c := h.publishAt("test.created", base.Add(2*time.Hour))
	// webhook.test events are only sent by POST .../test: stored directly.
	probe, err := h.store.Events().Create(context.Background(), models.NewEvent{WorkspaceID: h.admin.WorkspaceID, Type: models.EventWebhookTest, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	h.exec(`UPDATE events SET date_created = ? WHERE id = ?`, base.Add(3*time.Hour), probe.ID)

	page, raw := h.listEvents("")
	ids := func(p models.Page[models.EventDetail]) []uuid.UUID {
		out := []uuid.UUID{}
		for _, e := range p.Items {
			out = append(out, e.ID)
		}
		return out
	}
	if got := ids(page); !slices.Equal(got, []uuid.UUID{probe.ID, c, b, a}) || page.Meta != (models.PageMeta{Page: 1, PerPage: 25, TotalItems: 4, TotalPages: 1}) {
		t.Fatalf("list %v %+v", got, page.Meta)
	}
	for _, item := range raw {
		if got := hookMemberNames(t, item); got != "data,dateCreated,id,type" {
			t.Fatalf("list item members %s, want data,dateCreated,id,type", got)
		}
	}
	if page.Items[3].Type != models.EventTestCreated || !strings.Contains(string(page.Items[3].Data), base.Format(time.RFC3339)) || !page.Items[3].DateCreated.Equal(base) {
		t.Fatalf("oldest item %+v", page.Items[3])
	}

	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return "?" + v.Encode()
	}
	for _, tc := range []struct {
		query string
		want  []uuid.UUID
		total int
	}{
		{q("type", "test.created"), []uuid.UUID{c, a}, 2},
		{q("type", "webhook.test"), []uuid.UUID{probe.ID}, 1},
		{q("type", "webhook.disabled"), []uuid.UUID{}, 0},
		{q("since", base.Add(time.Hour).Format(time.RFC3339)), []uuid.UUID{probe.ID, c, b}, 3},
		{q("until", base.Add(time.Hour).Format(time.RFC3339)), []uuid.UUID{a}, 1},
		// The same instants in another offset, the + percent-encoded.
		{q("since", base.Add(time.Hour).In(time.FixedZone("", 3600)).Format(time.RFC3339), "until", "2026-11-20T12:00:00.000000Z"), []uuid.UUID{b}, 1},
		{q("since", "2026-11-20T11:00:00Z", "until", "2026-11-20T11:00:00Z"), []uuid.UUID{}, 0},
		{q("type", "test.created", "since", "2026-11-20T10:00:00Z", "until", "2026-11-20T13:00:00Z", "perPage", "1"), []uuid.UUID{c}, 2},
		{q("perPage", "2", "page", "2"), []uuid.UUID{b, a}, 4},
		{q("perPage", "2", "page", "3"), []uuid.UUID{}, 4},
		{q("type", ""), []uuid.UUID{probe.ID, c, b, a}, 4},
		{q("since", "", "until", ""), []uuid.UUID{probe.ID, c, b, a}, 4},
	} {
		p, _ := h.listEvents(tc.query)
		if got := ids(p); !slices.Equal(got, tc.want) || p.Meta.TotalItems != tc.total {
			t.Errorf("%s: %v total %d, want %v total %d", tc.query, got, p.Meta.TotalItems, tc.want, tc.total)
		}
	}

	// Another workspace's events are not listed, and its path is 404.
	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	h.doJSON(http.MethodPost, "/v1/workspaces/"+other.WorkspaceID.String()+"/events", other.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, nil)
	if p, _ := h.listEvents(""); p.Meta.TotalItems != 4 {
		t.Fatalf("another workspace's event is listed: %+v", p.Meta)
	}
	member := h.addKey(models.RoleMember)
	bad := func(name, query, field string) apiCase {
		return apiCase{name: name, method: http.MethodGet, url: h.eventsPath() + query, key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: field}
	}
	h.run([]apiCase{
		bad("unknown type", "?type=test.exploded", "type"),
		bad("type twice", "?type=test.created&type=test.deleted", "type"),
		bad("since not a date-time", "?since=yesterday", "since"),
		bad("since a date alone", "?since=2026-11-20", "since"),
		bad("since without an offset", "?since=2026-11-20T10:00:00", "since"),
		bad("an unencoded + offset", "?since=2026-11-20T10:00:00+01:00", "since"),
		bad("until malformed", "?until=2026-13-01T00:00:00Z", "until"),
		bad("year 0", "?since=0000-06-01T00:00:00Z", "since"),
		bad("an offset of 24 hours", "?since=2026-11-20T10:00:00%2B24:00", "since"),
		bad("since after until", "?since=2026-11-20T12:00:00Z&until=2026-11-20T11:00:00Z", "until"),
		bad("perPage 101", "?perPage=101", "perPage"),
		bad("malformed query", "?since=%zz", "query"),
		{name: "member", method: http.MethodGet, url: h.eventsPath(), key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "member, bad filter", method: http.MethodGet, url: h.eventsPath() + "?type=nope", key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "other workspace", method: http.MethodGet, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/events", key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "no key", method: http.MethodGet, url: h.eventsPath(), status: 401, wantCode: "missing_credentials"},
	})
}

// GET .../events filters by a recipient's delivery status and by
// recipient, as the portal's Messages page does: an event matches when
// one of its recipients (the webhookId's, if given) has the status.
func TestEventsListByRecipientStatus(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	one := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	two := h.createHook(map[string]any{"url": "https://b.example.com", "eventTypes": []string{"test.created", "test.deleted"}})
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	done := h.publishAt("test.created", base)                        // one succeeded, two failed
	waiting := h.publishAt("test.deleted", base.Add(time.Minute))    // two: no attempt yet
	retrying := h.publishAt("test.created", base.Add(2*time.Minute)) // one pending a retry, two succeeded
	state := func(ev, sub uuid.UUID, status string, attempts int) {
		h.exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, next_attempt_at, event_date_created)
			SELECT id, ?, ?, ?, CASE WHEN ? = 'pending' THEN now() END, date_created FROM events WHERE id = ?`, sub, status, attempts, status, ev)
	}
	state(done, one.ID, "succeeded", 1)
	state(done, two.ID, "failed", 3)
	state(retrying, one.ID, "pending", 1)
	state(retrying, two.ID, "succeeded", 1)
	ids := func(query string) []uuid.UUID {
		t.Helper()
		p, _ := h.listEvents(query)
		out := []uuid.UUID{}
		for _, e := range p.Items {
			out = append(out, e.ID)
		}
		if p.Meta.TotalItems != len(out) {
			t.Errorf("%s: total %d for %d items", query, p.Meta.TotalItems, len(out))
		}
		return out
	}
	for _, tc := range []struct {
		query string
		want  []uuid.UUID
	}{
		{"?status=pending", []uuid.UUID{retrying, waiting}},
		{"?status=succeeded", []uuid.UUID{retrying, done}},
		{"?status=failed", []uuid.UUID{done}},
		{"?status=pending&webhookId=" + one.ID.String(), []uuid.UUID{retrying}},
		{"?status=pending&webhookId=" + two.ID.String(), []uuid.UUID{waiting}},
		{"?webhookId=" + one.ID.String(), []uuid.UUID{retrying, done}},
		{"?status=failed&type=test.deleted", []uuid.UUID{}},
		{"?webhookId=" + uuid.NewString(), []uuid.UUID{}},
		{"?status=&webhookId=", []uuid.UUID{retrying, waiting, done}},
	} {
		if got := ids(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	bad := func(name, query, field string) apiCase {
		return apiCase{name: name, method: http.MethodGet, url: h.eventsPath() + query, key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: field}
	}
	h.run([]apiCase{
		bad("unknown status", "?status=ok", "status"),
		bad("status twice", "?status=failed&status=pending", "status"),
		bad("malformed webhookId", "?webhookId=nope", "webhookId"),
	})
}

func TestEventGet(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	body := func(u string) map[string]any {
		return map[string]any{"url": u, "eventTypes": []string{"test.created"}}
	}
	one, two, three := h.createHook(body("https://a.example.com")), h.createHook(body("https://b.example.com")), h.createHook(body("https://c.example.com"))
	var acc models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{"k": "v"}}, http.StatusAccepted, &acc)
	ev, err := h.store.Events().Get(context.Background(), acc.ID)
	if err != nil || len(ev.Recipients) != 3 {
		t.Fatalf("stored event %+v, %v", ev, err)
	}
	next := time.Now().Add(time.Minute).UTC().Truncate(time.Microsecond)
	h.exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, next_attempt_at, last_status_code, event_date_created)
		VALUES (?, ?, 'pending', 1, ?, 500, ?), (?, ?, 'succeeded', 1, NULL, 200, ?)`,
		ev.ID, one.ID, next, ev.DateCreated, ev.ID, two.ID, ev.DateCreated)
	h.doJSON(http.MethodDelete, h.hooksPath(three.ID.String()), h.admin.Secret, nil, http.StatusNoContent, nil)

	path := h.eventsPath() + "/" + ev.ID.String()
	rec := h.do(http.MethodGet, path, h.admin.Secret, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("get: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(t, rec.Body.Bytes()); got != "data,dateCreated,id,recipients,type" {
		t.Fatalf("event members %s", got)
	}
	var raw struct {
		Recipients []json.RawMessage `json:"recipients"`
	}
	hookDecode(t, rec.Body.Bytes(), &raw)
	for _, r := range raw.Recipients {
		if got := hookMemberNames(t, r); got != "attempts,nextAttemptAt,status,statusCode,subscriptionId" {
			t.Fatalf("recipient members %s", got)
		}
	}
	var got models.EventDetail
	hookDecode(t, rec.Body.Bytes(), &got)
	byID := map[uuid.UUID]models.EventRecipient{}
	for _, r := range got.Recipients {
		byID[r.SubscriptionID] = r
	}
	p, s := byID[one.ID], byID[two.ID]
	if got.ID != ev.ID || got.Type != models.EventTestCreated || string(got.Data) != `{"k":"v"}` || len(got.Recipients) != 2 ||
		p.Status != models.DeliveryPending || p.Attempts != 1 || p.NextAttemptAt == nil || !p.NextAttemptAt.Equal(next) || p.StatusCode == nil || *p.StatusCode != 500 ||
		s.Status != models.DeliverySucceeded || s.Attempts != 1 || s.NextAttemptAt != nil || s.StatusCode == nil || *s.StatusCode != 200 {
		t.Fatalf("event %s", rec.Body)
	}

	// A recipient without a state: pending, no attempt, its first attempt
	// due since the event's acceptance (never a null nextAttemptAt while
	// pending).
	h.exec(`DELETE FROM webhook_delivery_states WHERE subscription_id = ?`, one.ID)
	rec = h.do(http.MethodGet, path, h.admin.Secret, nil)
	var fresh struct {
		DateCreated string `json:"dateCreated"`
	}
	mustDecode(t, rec.Body.Bytes(), &fresh)
	if !strings.Contains(rec.Body.String(), `{"subscriptionId":"`+one.ID.String()+`","status":"pending","attempts":0,"nextAttemptAt":"`+fresh.DateCreated+`","statusCode":null}`) {
		t.Fatalf("recipient without a state: %s", rec.Body)
	}

	// An event with no recipients has "recipients": [].
	var lonely models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.deleted", "data": map[string]any{}}, http.StatusAccepted, &lonely)
	rec = h.do(http.MethodGet, h.eventsPath()+"/"+lonely.ID.String(), h.admin.Secret, nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"recipients":[]`) {
		t.Fatalf("event without recipients: %d %s", rec.Code, rec.Body)
	}

	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	var theirs models.EventAccepted
	h.doJSON(http.MethodPost, "/v1/workspaces/"+other.WorkspaceID.String()+"/events", other.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &theirs)
	member := h.addKey(models.RoleMember)
	h.run([]apiCase{
		{name: "upper-case id", method: http.MethodGet, url: h.eventsPath() + "/" + strings.ToUpper(ev.ID.String()), key: h.admin.Secret, status: 200},
		{name: "their event in my workspace", method: http.MethodGet, url: h.eventsPath() + "/" + theirs.ID.String(), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "their event in theirs", method: http.MethodGet, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/events/" + theirs.ID.String(), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "my event in theirs", method: http.MethodGet, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/events/" + ev.ID.String(), key: other.Secret, status: 404, wantCode: "not_found"},
		{name: "unknown", method: http.MethodGet, url: h.eventsPath() + "/" + uuid.NewString(), key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "malformed id", method: http.MethodGet, url: h.eventsPath() + "/nope", key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "braced id", method: http.MethodGet, url: h.eventsPath() + "/{" + ev.ID.String() + "}", key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "member", method: http.MethodGet, url: path, key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "member, unknown id", method: http.MethodGet, url: h.eventsPath() + "/" + uuid.NewString(), key: member.Secret, status: 403, wantCode: "forbidden"},
		{name: "PUT", method: http.MethodPut, url: path, key: h.admin.Secret, body: map[string]any{}, status: 405, wantCode: "method_not_allowed"},
	})
}

func TestDeliveriesFilters(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	var e1, e2 models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &e1)
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &e2)
	// e1: failed then succeeded; e2: failed twice.
	h.exec(`INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success, status_code, date_created) VALUES
		(?, ?, ?, 1, false, 500, now() - interval '4 minutes'), (?, ?, ?, 2, true, 200, now() - interval '3 minutes'),
		(?, ?, ?, 1, false, 503, now() - interval '2 minutes'), (?, ?, ?, 2, false, NULL, now() - interval '1 minute')`,
		uuid.New(), hook.ID, e1.ID, uuid.New(), hook.ID, e1.ID, uuid.New(), hook.ID, e2.ID, uuid.New(), hook.ID, e2.ID)
	path := h.hooksPath(hook.ID.String(), "deliveries")
	type attempt struct {
		event   uuid.UUID
		n       int
		success bool
	}
	list := func(query string) ([]attempt, int) {
		t.Helper()
		var p models.Page[models.WebhookDelivery]
		h.doJSON(http.MethodGet, path+query, h.admin.Secret, nil, http.StatusOK, &p)
		out := []attempt{}
		for _, d := range p.Items {
			out = append(out, attempt{d.EventID, d.AttemptNumber, d.Success})
		}
		return out, p.Meta.TotalItems
	}
	for _, tc := range []struct {
		query string
		want  []attempt
		total int
	}{
		{"", []attempt{{e2.ID, 2, false}, {e2.ID, 1, false}, {e1.ID, 2, true}, {e1.ID, 1, false}}, 4},
		{"?status=failed", []attempt{{e2.ID, 2, false}, {e2.ID, 1, false}, {e1.ID, 1, false}}, 3},
		{"?status=succeeded", []attempt{{e1.ID, 2, true}}, 1},
		{"?eventId=" + e1.ID.String(), []attempt{{e1.ID, 2, true}, {e1.ID, 1, false}}, 2},
		{"?eventId=" + strings.ToUpper(e2.ID.String()) + "&status=succeeded", []attempt{}, 0},
		{"?eventId=" + e2.ID.String() + "&status=failed&perPage=1&page=2", []attempt{{e2.ID, 1, false}}, 2},
		{"?status=failed&perPage=2", []attempt{{e2.ID, 2, false}, {e2.ID, 1, false}}, 3},
		{"?status=", []attempt{{e2.ID, 2, false}, {e2.ID, 1, false}, {e1.ID, 2, true}, {e1.ID, 1, false}}, 4},
	} {
		got, total := list(tc.query)
		if !slices.Equal(got, tc.want) || total != tc.total {
			t.Errorf("%s: %v total %d, want %v total %d", tc.query, got, total, tc.want, tc.total)
		}
	}

	bad := func(name, query, field string) apiCase {
		return apiCase{name: name, method: http.MethodGet, url: path + query, key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: field}
	}
	h.run([]apiCase{
		bad("status unknown", "?status=ok", "status"),
		bad("status twice", "?status=failed&status=succeeded", "status"),
		bad("eventId malformed", "?eventId=nope", "eventId"),
		bad("eventId unhyphenated", "?eventId="+strings.ReplaceAll(e1.ID.String(), "-", ""), "eventId"),
		bad("eventId twice", "?eventId="+e1.ID.String()+"&eventId="+e2.ID.String(), "eventId"),
		{name: "filter on an unknown subscription", method: http.MethodGet, url: h.hooksPath(uuid.NewString(), "deliveries") + "?status=failed", key: h.admin.Secret, status: 404, wantCode: "not_found"},
	})
}

// status=pending lists the deliveries with no outcome yet, as the portal's
// endpoint page does: events not yet dispatched (no attempt) and
// delivery states still pending, each once, newest event first, in a
// shape of their own; a record of the same subscription is not one.
func TestDeliveriesPending(t *testing.T) {
	h := newHarness(t, withWebhookKey, noRateLimits)
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	publish := func() models.EventAccepted {
		var e models.EventAccepted
		h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, map[string]any{"type": "test.created", "data": map[string]any{}}, http.StatusAccepted, &e)
		return e
	}
	waiting, retrying, done := publish(), publish(), publish()
	h.exec(`UPDATE events SET dispatched_at = now(), date_created = date_created - make_interval(secs => ?)
		WHERE id = ?`, 60, retrying.ID)
	h.exec(`UPDATE events SET dispatched_at = now(), date_created = date_created - make_interval(secs => ?)
		WHERE id = ?`, 120, done.ID)
	next := time.Now().UTC().Add(time.Minute).Truncate(time.Microsecond)
	h.exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, next_attempt_at, last_status_code, event_date_created)
		SELECT id, ?, 'pending', 2, ?, 503, date_created FROM events WHERE id = ?`, hook.ID, next, retrying.ID)
	h.exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, last_status_code, event_date_created)
		SELECT id, ?, 'succeeded', 1, 200, date_created FROM events WHERE id = ?`, hook.ID, done.ID)
	path := h.hooksPath(hook.ID.String(), "deliveries")

	var page struct {
		Meta  models.PageMeta  `json:"_meta"`
		Items []map[string]any `json:"items"`
	}
	h.doJSON(http.MethodGet, path+"?status=pending", h.admin.Secret, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 2 || len(page.Items) != 2 {
		t.Fatalf("pending: %+v", page)
	}
	first, second := page.Items[0], page.Items[1]
	if first["eventId"] != waiting.ID.String() || first["status"] != "pending" || first["attempts"] != float64(0) ||
		first["lastStatusCode"] != nil || first["nextAttemptAt"] == nil || first["eventDateCreated"] == nil {
		t.Errorf("an event not yet dispatched: %v", first)
	}
	if second["eventId"] != retrying.ID.String() || second["attempts"] != float64(2) || second["lastStatusCode"] != float64(503) ||
		second["nextAttemptAt"] != next.Format(time.RFC3339Nano) {
		t.Errorf("a delivery waiting for its third attempt: %v", second)
	}
	if len(first) != 6 {
		t.Errorf("members %v, want eventId, eventDateCreated, status, attempts, lastStatusCode, nextAttemptAt", first)
	}
	h.doJSON(http.MethodGet, path+"?status=pending&eventId="+retrying.ID.String(), h.admin.Secret, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 1 || len(page.Items) != 1 || page.Items[0]["eventId"] != retrying.ID.String() {
		t.Errorf("pending of one event: %+v", page)
	}
	h.doJSON(http.MethodGet, path+"?status=pending&perPage=1&page=2", h.admin.Secret, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 2 || page.Meta.TotalPages != 2 || len(page.Items) != 1 || page.Items[0]["eventId"] != retrying.ID.String() {
		t.Errorf("pending, page 2 of 1 each: %+v", page)
	}
	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	h.run([]apiCase{
		{name: "an unknown subscription", method: http.MethodGet, url: h.hooksPath(uuid.NewString(), "deliveries") + "?status=pending", key: h.admin.Secret, status: 404, wantCode: "not_found"},
		{name: "another workspace's key", method: http.MethodGet, url: "/v1/workspaces/" + other.WorkspaceID.String() + "/webhooks/" + hook.ID.String() + "/deliveries?status=pending", key: other.Secret, status: 404, wantCode: "not_found"},
		{name: "a bad eventId beside it", method: http.MethodGet, url: path + "?status=pending&eventId=nope", key: h.admin.Secret, status: 400, wantCode: "validation_failed", wantField: "eventId"},
	})
}
