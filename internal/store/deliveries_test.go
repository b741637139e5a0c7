package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func (f *webhookFixture) event(t *testing.T) models.Event {
	t.Helper()
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDeliveriesRecordOnce(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	ev := f.event(t)
	first := models.WebhookDelivery{
		SubscriptionID: w.ID, EventID: ev.ID, AttemptNumber: 1, Success: false,
		StatusCode: new(500), ResponseBody: "oops", ResponseTimeMs: 12, ErrorMessage: new("HTTP 500"),
	}
	rec, wrote, err := f.st.Deliveries().Record(f.ctx, first)
	if err != nil || !wrote {
		t.Fatalf("record: wrote %v, %v", wrote, err)
	}
	// The same attempt again (an activity that ran twice) writes nothing and
	// hands back the first record.
	second := first
	second.Success, second.StatusCode, second.ErrorMessage = true, new(200), nil
	again, wrote, err := f.st.Deliveries().Record(f.ctx, second)
	if err != nil || wrote {
		t.Fatalf("second record: wrote %v, %v", wrote, err)
	}
	if again.ID != rec.ID || again.Success || *again.StatusCode != 500 {
		t.Fatalf("second record returned %+v, want the first %+v", again, rec)
	}
	found, err := f.st.Deliveries().Find(f.ctx, w.ID, ev.ID, 1)
	if err != nil || found.ID != rec.ID || found.ResponseBody != "oops" || found.ResponseTimeMs != 12 || *found.ErrorMessage != "HTTP 500" {
		t.Fatalf("find %+v, %v", found, err)
	}
	if _, err := f.st.Deliveries().Find(f.ctx, w.ID, ev.ID, 2); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("find attempt 2: %v", err)
	}
	// A deleted subscription cannot get records.
	gone := first
	gone.SubscriptionID = uuid.New()
	if _, _, err := f.st.Deliveries().Record(f.ctx, gone); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("record for a missing subscription: %v", err)
	}
}

func TestDeliveriesListAndRetention(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	otherSub := f.create(t, f.ws, true, models.EventTestCreated)
	ev := f.event(t)
	base := time.Now().Add(-100 * 24 * time.Hour)
	for i := 1; i <= 3; i++ {
		_, _, err := f.st.Deliveries().Record(f.ctx, models.WebhookDelivery{
			SubscriptionID: w.ID, EventID: ev.ID, AttemptNumber: i, Success: i == 3,
			DateCreated: base.Add(time.Duration(i) * 24 * time.Hour * 5), // days 95, 90, 85 ago
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := f.st.Deliveries().Record(f.ctx, models.WebhookDelivery{SubscriptionID: otherSub.ID, EventID: ev.ID, AttemptNumber: 1, Success: true}); err != nil {
		t.Fatal(err)
	}

	page, err := f.st.Deliveries().List(f.ctx, f.ws.WorkspaceID, w.ID, models.PageRequest{Page: 1, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.Meta != (models.PageMeta{Page: 1, PerPage: 2, TotalItems: 3, TotalPages: 2}) {
		t.Fatalf("meta %+v", page.Meta)
	}
	if len(page.Items) != 2 || page.Items[0].AttemptNumber != 3 || page.Items[1].AttemptNumber != 2 {
		t.Fatalf("page 1 is not newest first: %+v", page.Items)
	}
	if _, err := f.st.Deliveries().List(f.ctx, f.other.WorkspaceID, w.ID, models.PageRequest{Page: 1, PerPage: 2}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another workspace's subscription: %v", err)
	}

	// Retention: records older than 90 days go, in batches.
	cutoff := time.Now().Add(-90*24*time.Hour + time.Hour)
	n, err := f.st.Deliveries().DeleteOlderThan(f.ctx, cutoff, 1)
	if err != nil || n != 1 {
		t.Fatalf("first batch deleted %d, %v", n, err)
	}
	n, _ = f.st.Deliveries().DeleteOlderThan(f.ctx, cutoff, 1)
	if n != 1 {
		t.Fatalf("second batch deleted %d", n)
	}
	n, _ = f.st.Deliveries().DeleteOlderThan(f.ctx, cutoff, 1)
	if n != 0 {
		t.Fatalf("third batch deleted %d, want 0", n)
	}
	page, _ = f.st.Deliveries().List(f.ctx, f.ws.WorkspaceID, w.ID, models.PageRequest{Page: 1, PerPage: 10})
	if len(page.Items) != 1 || page.Items[0].AttemptNumber != 3 {
		t.Fatalf("after retention: %+v", page.Items)
	}

	// An event goes only once no record refers to it.
	if err := f.st.Events().MarkManyDispatched(f.ctx, []uuid.UUID{ev.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.st.Events().DeleteExpired(f.ctx, time.Now().Add(time.Hour), 100); err != nil || n != 0 {
		t.Fatalf("deleted %d events with records left, %v", n, err)
	}
	if _, err := f.st.Deliveries().DeleteOlderThan(f.ctx, time.Now().Add(time.Hour), 100); err != nil {
		t.Fatal(err)
	}
	if n, err := f.st.Events().DeleteExpired(f.ctx, time.Now().Add(time.Hour), 100); err != nil || n != 1 {
		t.Fatalf("deleted %d events, %v; want 1", n, err)
	}
}
