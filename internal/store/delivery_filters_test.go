package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func TestDeliveriesListFiltered(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	other := f.create(t, f.ws, true, models.EventTestCreated)
	e1, e2 := f.event(t), f.event(t)
	base := time.Now().Add(-time.Hour)
	// e1: failed, failed, succeeded; e2: failed, failed. Records a minute
	// apart, in that order.
	type rec struct {
		ev      models.Event
		attempt int
		ok      bool
	}
	var ids []uuid.UUID // newest first
	for i, r := range []rec{{e1, 1, false}, {e1, 2, false}, {e2, 1, false}, {e1, 3, true}, {e2, 2, false}} {
		d, _, err := f.st.Deliveries().Record(f.ctx, models.WebhookDelivery{
			SubscriptionID: w.ID, EventID: r.ev.ID, AttemptNumber: r.attempt, Success: r.ok,
			DateCreated: base.Add(time.Duration(i) * time.Minute),
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append([]uuid.UUID{d.ID}, ids...)
	}
	// Another subscription's records never show.
	f.record(t, e1, other.ID, 1, true, nil)
	f.record(t, e2, other.ID, 1, false, nil)

	list := func(fl models.DeliveryFilter, page, perPage int) models.Page[models.WebhookDelivery] {
		t.Helper()
		p, err := f.st.Deliveries().ListFiltered(f.ctx, f.ws.WorkspaceID, w.ID, fl, models.PageRequest{Page: page, PerPage: perPage})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pick := func(i ...int) []uuid.UUID {
		out := []uuid.UUID{}
		for _, j := range i {
			out = append(out, ids[j])
		}
		return out
	}
	// ids newest first: 0 = e2#2 failed, 1 = e1#3 ok, 2 = e2#1 failed, 3 = e1#2 failed, 4 = e1#1 failed.
	ok, failed := true, false
	for _, c := range []struct {
		name          string
		f             models.DeliveryFilter
		page, perPage int
		want          []uuid.UUID
		total         int
	}{
		{"none", models.DeliveryFilter{}, 1, 25, pick(0, 1, 2, 3, 4), 5},
		{"failed", models.DeliveryFilter{Success: &failed}, 1, 25, pick(0, 2, 3, 4), 4},
		{"succeeded", models.DeliveryFilter{Success: &ok}, 1, 25, pick(1), 1},
		{"event", models.DeliveryFilter{EventID: &e1.ID}, 1, 25, pick(1, 3, 4), 3},
		{"event and failed", models.DeliveryFilter{EventID: &e1.ID, Success: &failed}, 1, 25, pick(3, 4), 2},
		{"event and succeeded", models.DeliveryFilter{EventID: &e2.ID, Success: &ok}, 1, 25, pick(), 0},
		{"unknown event", models.DeliveryFilter{EventID: new(uuid.New())}, 1, 25, pick(), 0},
		{"failed, full page counts", models.DeliveryFilter{Success: &failed}, 1, 2, pick(0, 2), 4},
		{"failed, last page", models.DeliveryFilter{Success: &failed}, 2, 3, pick(4), 4},
		{"failed, past the end counts", models.DeliveryFilter{Success: &failed}, 3, 2, pick(), 4},
		{"event, page 2", models.DeliveryFilter{EventID: &e1.ID}, 2, 2, pick(4), 3},
	} {
		p := list(c.f, c.page, c.perPage)
		got := []uuid.UUID{}
		for _, d := range p.Items {
			got = append(got, d.ID)
			if d.SubscriptionID != w.ID {
				t.Errorf("%s: record of subscription %v", c.name, d.SubscriptionID)
			}
		}
		if !slices.Equal(got, c.want) || p.Meta.TotalItems != c.total || p.Meta.Page != c.page || p.Meta.PerPage != c.perPage {
			t.Errorf("%s: %v %+v, want %v total %d", c.name, got, p.Meta, c.want, c.total)
		}
	}

	// Tenancy: another workspace's subscription, or none, is not found
	// whatever the filter.
	for _, c := range []struct{ ws, sub uuid.UUID }{{f.other.WorkspaceID, w.ID}, {f.ws.WorkspaceID, uuid.New()}} {
		_, err := f.st.Deliveries().ListFiltered(f.ctx, c.ws, c.sub, models.DeliveryFilter{Success: &failed}, models.PageRequest{Page: 1, PerPage: 25})
		if !errors.Is(err, models.ErrNotFound) {
			t.Errorf("subscription %v in %v: %v, want not found", c.sub, c.ws, err)
		}
	}
}
