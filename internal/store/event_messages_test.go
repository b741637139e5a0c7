package store_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Messages narrows events by recipient and status (from delivery states,
// or the records where no state is kept) and gives each its recipients.
func TestEventMessagesFilters(t *testing.T) {
	f := newWebhookFixture(t)
	ws := f.ws.WorkspaceID
	a := f.create(t, f.ws, true, models.EventTestCreated)
	b := f.create(t, f.ws, true, models.EventTestCreated, models.EventTestDeleted)
	// An event lists its recipients in id order: a first, whatever the ids.
	for bytes.Compare(b.ID[:], a.ID[:]) < 0 {
		if err := f.st.Webhooks().Delete(f.ctx, ws, b.ID); err != nil {
			t.Fatal(err)
		}
		b = f.create(t, f.ws, true, models.EventTestCreated, models.EventTestDeleted)
	}
	theirs := f.create(t, f.other, true, models.EventTestCreated)
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	e0 := f.publishAt(t, ws, models.EventTestCreated, base)                  // a succeeded, b failed
	e1 := f.publishAt(t, ws, models.EventTestDeleted, base.Add(time.Hour))   // b: nothing yet
	e2 := f.publishAt(t, ws, models.EventTestCreated, base.Add(2*time.Hour)) // a pending, b succeeded (a record only)
	f.publishAt(t, f.other.WorkspaceID, models.EventTestCreated, base.Add(time.Hour))
	f.state(t, e0, a.ID, "succeeded", 1, nil, new(200))
	f.state(t, e0, b.ID, "failed", 3, nil, new(500))
	f.state(t, e2, a.ID, "pending", 1, new(base.Add(3*time.Hour)), new(503))
	f.record(t, e2, b.ID, 1, true, new(204))

	list := func(fl models.EventFilter) models.Page[models.EventDetail] {
		t.Helper()
		fl.WorkspaceID = ws
		if fl.Page.Page == 0 {
			fl.Page = models.PageRequest{Page: 1, PerPage: 25}
		}
		p, _, err := f.st.Events().Messages(f.ctx, fl)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	since := base.Add(time.Hour)
	for _, c := range []struct {
		name string
		f    models.EventFilter
		ids  []uuid.UUID
	}{
		{"all", models.EventFilter{}, []uuid.UUID{e2.ID, e1.ID, e0.ID}},
		{"endpoint a", models.EventFilter{SubscriptionID: &a.ID}, []uuid.UUID{e2.ID, e0.ID}},
		{"endpoint b", models.EventFilter{SubscriptionID: &b.ID}, []uuid.UUID{e2.ID, e1.ID, e0.ID}},
		{"another workspace's endpoint", models.EventFilter{SubscriptionID: &theirs.ID}, nil},
		{"failed", models.EventFilter{Status: models.DeliveryFailed}, []uuid.UUID{e0.ID}},
		{"pending, state or none", models.EventFilter{Status: models.DeliveryPending}, []uuid.UUID{e2.ID, e1.ID}},
		{"succeeded by record", models.EventFilter{SubscriptionID: &b.ID, Status: models.DeliverySucceeded}, []uuid.UUID{e2.ID}},
		{"a succeeded", models.EventFilter{SubscriptionID: &a.ID, Status: models.DeliverySucceeded}, []uuid.UUID{e0.ID}},
		{"type and status", models.EventFilter{Type: models.EventTestDeleted, Status: models.DeliverySucceeded}, nil},
		{"since", models.EventFilter{Since: &since}, []uuid.UUID{e2.ID, e1.ID}},
	} {
		p := list(c.f)
		if got := eventIDs(p.Items); !slices.Equal(got, c.ids) || p.Meta.TotalItems != len(c.ids) {
			t.Errorf("%s: %v %+v, want %v", c.name, got, p.Meta, c.ids)
		}
	}

	// Each event carries its recipients, in order, with their status.
	p := list(models.EventFilter{})
	got := map[uuid.UUID][]models.DeliveryStatus{}
	for _, ev := range p.Items {
		for _, r := range ev.Recipients {
			got[ev.ID] = append(got[ev.ID], r.Status)
		}
	}
	want := map[uuid.UUID][]models.DeliveryStatus{
		e0.ID: {models.DeliverySucceeded, models.DeliveryFailed},
		e1.ID: {models.DeliveryPending},
		e2.ID: {models.DeliveryPending, models.DeliverySucceeded},
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("recipients of %s: %v, want %v", id, got[id], w)
		}
	}
	if r := p.Items[2].Recipients; r[0].SubscriptionID != a.ID || r[1].SubscriptionID != b.ID {
		t.Errorf("recipients of e0 out of order: %+v", r)
	}

	// A filtered total past the first page is counted with the filter.
	p = list(models.EventFilter{Status: models.DeliveryPending, Page: models.PageRequest{Page: 2, PerPage: 1}})
	if p.Meta.TotalItems != 2 || len(p.Items) != 1 || p.Items[0].ID != e1.ID || len(p.Items[0].Recipients) != 1 {
		t.Errorf("pending, page 2 of 1: %+v", p)
	}
}

// cloneEvent copies an event n times, each a second older than the last,
// in one statement.
func (f *webhookFixture) cloneEvent(t *testing.T, id uuid.UUID, n int) {
	t.Helper()
	f.exec(t, `INSERT INTO events SELECT (jsonb_populate_record(e, jsonb_build_object(
			'id', gen_random_uuid(), 'date_created', e.date_created - make_interval(secs => g)))).*
		FROM events AS e, generate_series(1, ?) AS g WHERE e.id = ?`, n, id)
}

// The total stops at MessagesCountCap, and so do the pages: past the cap
// a page is empty and its total is the cap.
func TestEventMessagesCountCapped(t *testing.T) {
	f := newWebhookFixture(t)
	ws := f.ws.WorkspaceID
	ev := f.publishAt(t, ws, models.EventTestCreated, time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	messages := func(page, perPage int) (models.Page[models.EventDetail], bool) {
		t.Helper()
		p, more, err := f.st.Events().Messages(f.ctx, models.EventFilter{
			WorkspaceID: ws, Page: models.PageRequest{Page: page, PerPage: perPage}})
		if err != nil {
			t.Fatal(err)
		}
		return p, more
	}
	f.cloneEvent(t, ev.ID, store.MessagesCountCap-1) // exactly the cap
	if p, more := messages(2, 25); more || p.Meta.TotalItems != store.MessagesCountCap || p.Meta.TotalPages != 400 {
		t.Errorf("at the cap: %+v more=%v", p.Meta, more)
	}
	f.cloneEvent(t, ev.ID, 5) // past it
	for _, c := range []struct{ page, perPage, items int }{
		{2, 25, 25},   // a page that does not tell the total counts
		{400, 25, 25}, // the last page within the cap
		{401, 25, 0},  // past the cap: empty
		{334, 30, 10}, // cut short by the cap
		{1 << 20, 100, 0},
	} {
		p, more := messages(c.page, c.perPage)
		if !more || p.Meta.TotalItems != store.MessagesCountCap || len(p.Items) != c.items {
			t.Errorf("page %d of %d: %+v, %d items, more=%v; want the cap, %d items, more", c.page, c.perPage, p.Meta, len(p.Items), more, c.items)
		}
	}
}
