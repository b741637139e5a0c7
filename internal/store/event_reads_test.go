package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/models"
)

func (f *webhookFixture) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := f.st.DB().ExecContext(f.ctx, query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// publishAt stores an event of typ in the workspace, created at at.
func (f *webhookFixture) publishAt(t *testing.T, ws uuid.UUID, typ models.EventType, at time.Time) models.Event {
	t.Helper()
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: ws, Type: typ, Data: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	f.exec(t, `UPDATE events SET date_created = ? WHERE id = ?`, at, ev.ID)
	return ev
}

func eventIDs(items []models.EventDetail) []uuid.UUID {
	ids := make([]uuid.UUID, len(items))
	for i, e := range items {
		ids[i] = e.ID
	}
	return ids
}

func TestEventsListFiltersAndPages(t *testing.T) {
	f := newWebhookFixture(t)
	ws := f.ws.WorkspaceID
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	// Five events an hour apart (0..4), the last two at the same instant;
	// one of them a test event. Another workspace's event sits among them.
	var evs []models.Event
	for i, typ := range []models.EventType{models.EventTestCreated, models.EventTestDeleted, models.EventTestCreated, models.EventWebhookTest, models.EventTestCreated} {
		evs = append(evs, f.publishAt(t, ws, typ, base.Add(time.Duration(min(i, 3))*time.Hour)))
	}
	f.publishAt(t, f.other.WorkspaceID, models.EventTestCreated, base.Add(time.Hour))
	// Newest first; the two at 13:00 by id, descending.
	tied := []uuid.UUID{evs[3].ID, evs[4].ID}
	slices.SortFunc(tied, func(a, b uuid.UUID) int { return -slices.Compare(a[:], b[:]) })
	want := append(tied, evs[2].ID, evs[1].ID, evs[0].ID)

	list := func(fl models.EventFilter) models.Page[models.EventDetail] {
		t.Helper()
		fl.WorkspaceID = ws
		if fl.Page.PerPage == 0 {
			fl.Page = models.PageRequest{Page: 1, PerPage: 25}
		}
		p, err := f.st.Events().List(f.ctx, fl)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := list(models.EventFilter{})
	if got := eventIDs(all.Items); !slices.Equal(got, want) || all.Meta.TotalItems != 5 || all.Meta.TotalPages != 1 {
		t.Fatalf("all: %v %+v, want %v", got, all.Meta, want)
	}
	for _, e := range all.Items {
		if e.Recipients != nil || string(e.Data) != `{"n": 1}` || e.DateCreated.IsZero() {
			t.Fatalf("list item %+v", e)
		}
	}

	// Pages: a full page counts, the last page tells its total, a page
	// past the end counts.
	for _, c := range []struct {
		page, perPage, total int
		ids                  []uuid.UUID
	}{
		{1, 2, 5, want[:2]}, {2, 2, 5, want[2:4]}, {3, 2, 5, want[4:]}, {4, 2, 5, nil}, {1, 5, 5, want}, {2, 5, 5, nil},
	} {
		p := list(models.EventFilter{Page: models.PageRequest{Page: c.page, PerPage: c.perPage}})
		if got := eventIDs(p.Items); !slices.Equal(got, c.ids) || p.Meta.TotalItems != c.total || p.Meta.TotalPages != (c.total+c.perPage-1)/c.perPage {
			t.Errorf("page %d of %d: %v %+v, want %v total %d", c.page, c.perPage, got, p.Meta, c.ids, c.total)
		}
	}

	// Filters: type; since inclusive, until exclusive; together.
	at := func(h int) *time.Time { x := base.Add(time.Duration(h) * time.Hour); return &x }
	for _, c := range []struct {
		name string
		f    models.EventFilter
		ids  []uuid.UUID
	}{
		{"type", models.EventFilter{Type: models.EventTestCreated}, []uuid.UUID{evs[4].ID, evs[2].ID, evs[0].ID}},
		{"webhook.test", models.EventFilter{Type: models.EventWebhookTest}, []uuid.UUID{evs[3].ID}},
		{"type nobody sent", models.EventFilter{Type: models.EventWebhookDisabled}, nil},
		{"since inclusive", models.EventFilter{Since: at(2)}, want[:3]},
		{"until exclusive", models.EventFilter{Until: at(2)}, []uuid.UUID{evs[1].ID, evs[0].ID}},
		{"window", models.EventFilter{Since: at(1), Until: at(3)}, []uuid.UUID{evs[2].ID, evs[1].ID}},
		{"empty window", models.EventFilter{Since: at(1), Until: at(1)}, nil},
		{"type and window", models.EventFilter{Type: models.EventTestCreated, Since: at(1), Until: at(4)}, []uuid.UUID{evs[4].ID, evs[2].ID}},
		{"sub-microsecond since excludes the event before it", models.EventFilter{Since: new(base.Add(2*time.Hour + time.Nanosecond))}, want[:2]},
		{"sub-microsecond until includes the event before it", models.EventFilter{Until: new(base.Add(2*time.Hour + time.Nanosecond))}, want[2:]},
	} {
		p := list(c.f)
		if got := eventIDs(p.Items); !slices.Equal(got, c.ids) || p.Meta.TotalItems != len(c.ids) {
			t.Errorf("%s: %v %+v, want %v", c.name, got, p.Meta, c.ids)
		}
	}
	// A filtered total past the first page is counted with the filter.
	p := list(models.EventFilter{Type: models.EventTestCreated, Page: models.PageRequest{Page: 1, PerPage: 1}})
	if p.Meta.TotalItems != 3 || len(p.Items) != 1 || p.Items[0].ID != evs[4].ID {
		t.Errorf("type, perPage 1: %+v", p)
	}
	p = list(models.EventFilter{Since: at(1), Page: models.PageRequest{Page: 9, PerPage: 1}})
	if p.Meta.TotalItems != 4 || len(p.Items) != 0 {
		t.Errorf("since, past the end: %+v", p)
	}

	// The other workspace sees only its own.
	p, err := f.st.Events().List(f.ctx, models.EventFilter{WorkspaceID: f.other.WorkspaceID, Page: models.PageRequest{Page: 1, PerPage: 25}})
	if err != nil || p.Meta.TotalItems != 1 {
		t.Fatalf("other workspace: %+v, %v", p, err)
	}
}

// state writes a delivery state row as the attempt activity does.
func (f *webhookFixture) state(t *testing.T, ev models.Event, sub uuid.UUID, status string, attempts int, next *time.Time, code *int) {
	t.Helper()
	f.exec(t, `INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, next_attempt_at, last_status_code, event_date_created)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, ev.ID, sub, status, attempts, next, code, ev.DateCreated)
}

// record writes a bare delivery record, as attempts made before delivery
// states were kept left them (the store's Record writes a state too).
func (f *webhookFixture) record(t *testing.T, ev models.Event, sub uuid.UUID, attempt int, success bool, code *int) {
	t.Helper()
	f.exec(t, `INSERT INTO webhook_deliveries (id, subscription_id, event_id, attempt_number, success, status_code)
		VALUES (?, ?, ?, ?, ?, ?)`, uuid.New(), sub, ev.ID, attempt, success, code)
}

func TestEventDetailRecipients(t *testing.T) {
	f := newWebhookFixture(t)
	var subs []models.WebhookSubscription
	for range 5 {
		subs = append(subs, f.create(t, f.ws, true, models.EventTestCreated))
	}
	f.create(t, f.ws, false, models.EventTestCreated)   // disabled: no recipient
	f.create(t, f.ws, true, models.EventTestDeleted)    // other type
	f.create(t, f.other, true, models.EventTestCreated) // other workspace
	ev := f.event(t)
	if len(ev.Recipients) != 5 {
		t.Fatalf("recipients %v", ev.Recipients)
	}
	// The order is events.recipients', whatever it is.
	order := []uuid.UUID{subs[3].ID, subs[0].ID, subs[4].ID, subs[1].ID, subs[2].ID}
	f.exec(t, `UPDATE events SET recipients = ? WHERE id = ?`, pgdialect.Array(order), ev.ID)
	next := time.Now().Add(5 * time.Minute).UTC().Truncate(time.Microsecond)
	f.state(t, ev, subs[3].ID, "succeeded", 2, nil, new(204))
	f.state(t, ev, subs[0].ID, "pending", 1, &next, new(503))
	f.state(t, ev, subs[4].ID, "failed", 4, &next, nil) // a stray next_attempt_at is not shown
	// subs[1]: no state, no record. subs[2]: deleted since.
	if err := f.st.Webhooks().Delete(f.ctx, f.ws.WorkspaceID, subs[2].ID); err != nil {
		t.Fatal(err)
	}

	got, err := f.st.Events().Detail(f.ctx, f.ws.WorkspaceID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != ev.ID || got.Type != models.EventTestCreated || string(got.Data) != `{}` || !got.DateCreated.Equal(ev.DateCreated) {
		t.Fatalf("event %+v", got)
	}
	want := []models.EventRecipient{
		{SubscriptionID: subs[3].ID, Status: models.DeliverySucceeded, Attempts: 2, StatusCode: new(204)},
		{SubscriptionID: subs[0].ID, Status: models.DeliveryPending, Attempts: 1, NextAttemptAt: &next, StatusCode: new(503)},
		{SubscriptionID: subs[4].ID, Status: models.DeliveryFailed, Attempts: 4},
		// Attempt 1 due (or in flight) since the event's acceptance.
		{SubscriptionID: subs[1].ID, Status: models.DeliveryPending, Attempts: 0, NextAttemptAt: &ev.DateCreated},
	}
	checkRecipients(t, "event", got.Recipients, want)

	// Another workspace's event, and one that does not exist, are not found.
	for _, c := range []struct{ ws, id uuid.UUID }{{f.other.WorkspaceID, ev.ID}, {f.ws.WorkspaceID, uuid.New()}} {
		if _, err := f.st.Events().Detail(f.ctx, c.ws, c.id); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("detail %v in %v: %v, want not found", c.id, c.ws, err)
		}
	}

	// An event no one takes has no recipients, as [] (not nil).
	lonely, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestUpdated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err = f.st.Events().Detail(f.ctx, f.ws.WorkspaceID, lonely.ID)
	if err != nil || got.Recipients == nil || len(got.Recipients) != 0 {
		t.Fatalf("event without recipients: %+v, %v", got, err)
	}
}

// Events stored before recipients were recorded (recipients NULL) take
// their recipients from delivery states and records; attempts made before
// states were kept (records, no state) read from the records.
func TestEventDetailWithoutStates(t *testing.T) {
	f := newWebhookFixture(t)
	var subs []models.WebhookSubscription
	for range 4 {
		subs = append(subs, f.create(t, f.ws, true, models.EventTestCreated))
	}
	byID := slices.Clone(subs)
	slices.SortFunc(byID, func(a, b models.WebhookSubscription) int { return slices.Compare(a.ID[:], b.ID[:]) })

	// Recipients recorded, attempts made before states existed.
	ev := f.event(t)
	f.record(t, ev, byID[0].ID, 1, false, new(500))
	f.record(t, ev, byID[0].ID, 2, true, new(200))
	f.record(t, ev, byID[1].ID, 1, false, new(500))
	f.record(t, ev, byID[1].ID, 2, false, nil)
	f.state(t, ev, byID[2].ID, "pending", 1, nil, new(429)) // a state wins over records
	f.record(t, ev, byID[2].ID, 1, false, new(429))
	got, err := f.st.Events().Detail(f.ctx, f.ws.WorkspaceID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	// A pending state without a next attempt's time (a retry with no wait)
	// is due since the state was written; no attempt yet, since acceptance.
	var written time.Time
	if err := f.st.DB().NewRaw(`SELECT date_updated FROM webhook_delivery_states WHERE event_id = ? AND subscription_id = ?`,
		ev.ID, byID[2].ID).Scan(f.ctx, &written); err != nil {
		t.Fatal(err)
	}
	checkRecipients(t, "records without states", got.Recipients, []models.EventRecipient{
		{SubscriptionID: byID[0].ID, Status: models.DeliverySucceeded, Attempts: 2, StatusCode: new(200)},
		{SubscriptionID: byID[1].ID, Status: models.DeliveryFailed, Attempts: 2},
		{SubscriptionID: byID[2].ID, Status: models.DeliveryPending, Attempts: 1, NextAttemptAt: &written, StatusCode: new(429)},
		{SubscriptionID: byID[3].ID, Status: models.DeliveryPending, NextAttemptAt: &ev.DateCreated},
	})

	// No recipients recorded: those with a state or a record, by id.
	legacy := f.event(t)
	f.exec(t, `UPDATE events SET recipients = NULL WHERE id = ?`, legacy.ID)
	f.state(t, legacy, byID[3].ID, "failed", 3, nil, new(410))
	f.record(t, legacy, byID[1].ID, 1, true, new(200))
	f.state(t, legacy, byID[1].ID, "succeeded", 1, nil, new(200))
	f.record(t, legacy, byID[0].ID, 1, false, new(502))
	got, err = f.st.Events().Detail(f.ctx, f.ws.WorkspaceID, legacy.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkRecipients(t, "legacy event", got.Recipients, []models.EventRecipient{
		{SubscriptionID: byID[0].ID, Status: models.DeliveryFailed, Attempts: 1, StatusCode: new(502)},
		{SubscriptionID: byID[1].ID, Status: models.DeliverySucceeded, Attempts: 1, StatusCode: new(200)},
		{SubscriptionID: byID[3].ID, Status: models.DeliveryFailed, Attempts: 3, StatusCode: new(410)},
	})
}

func checkRecipients(t *testing.T, name string, got, want []models.EventRecipient) {
	t.Helper()
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		g, w := got[i], want[i]
		same = g.SubscriptionID == w.SubscriptionID && g.Status == w.Status && g.Attempts == w.Attempts &&
			eqPtr(g.StatusCode, w.StatusCode) && (g.NextAttemptAt == nil) == (w.NextAttemptAt == nil) &&
			(g.NextAttemptAt == nil || g.NextAttemptAt.Equal(*w.NextAttemptAt))
	}
	if !same {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%s: recipients\n%s\nwant\n%s", name, gj, wj)
	}
}

func eqPtr[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
