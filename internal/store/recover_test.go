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

// FailedPage walks one subscription's failed deliveries in the window by
// keyset, oldest first and ties by id: other statuses, other
// subscriptions, events outside [since, until) and another workspace's
// view are left out, and the walk neither repeats nor skips an event at a
// page boundary, even between two events of the same instant. Each event
// comes with its delivery's attempts.
func TestDeliveriesFailedPage(t *testing.T) {
	f := newWebhookFixture(t)
	subA := f.create(t, f.ws, true, models.EventType("test.created")).ID
	subB := f.create(t, f.ws, true, models.EventType("test.created")).ID
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	at := func(sec int) models.Event {
		t.Helper()
		when := base.Add(time.Duration(sec) * time.Second)
		ev := f.publishAt(t, f.ws.WorkspaceID, "test.created", when)
		ev.DateCreated = when
		return ev
	}
	e0, e1, e2, e3, e4, e5, e6 := at(0), at(1), at(1), at(2), at(3), at(4), at(2)
	for _, ev := range []models.Event{e0, e1, e2, e4, e5} {
		f.state(t, ev, subA, "failed", 3, nil, nil)
	}
	f.state(t, e3, subA, "succeeded", 1, nil, nil)
	next := base.Add(time.Hour)
	f.state(t, e6, subA, "pending", 1, &next, nil)
	f.state(t, e1, subB, "failed", 3, nil, nil)
	f.exec(t, `UPDATE webhook_delivery_states SET attempts = 7 WHERE event_id = ? AND subscription_id = ?`, e4.ID, subA)

	since, until := base.Add(time.Second), base.Add(4*time.Second)
	tie := []uuid.UUID{e1.ID, e2.ID}
	slices.SortFunc(tie, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	want := append(tie, e4.ID)

	var got []uuid.UUID
	var cursor *store.RecoverCursor
	pages := 0
	for {
		page, err := f.st.Deliveries().FailedPage(f.ctx, f.ws.WorkspaceID, subA, since, until, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, ev := range page {
			got = append(got, ev.ID)
			if ev.WorkspaceID != f.ws.WorkspaceID || ev.Type != "test.created" || ev.DispatchedAt != nil || len(ev.Recipients) != 2 {
				t.Errorf("event %+v", ev)
			}
			// Each with its attempts (the state's).
			if want := map[bool]int{true: 7, false: 3}[ev.ID == e4.ID]; ev.Attempts != want {
				t.Errorf("event %s: %d attempts, want %d", ev.ID, ev.Attempts, want)
			}
		}
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1]
		cursor = &store.RecoverCursor{EventDateCreated: last.DateCreated, EventID: last.ID}
	}
	if !slices.Equal(got, want) || pages != 2 {
		t.Fatalf("walk %v in %d pages, want %v in 2", got, pages, want)
	}

	if page, err := f.st.Deliveries().FailedPage(f.ctx, f.ws.WorkspaceID, subB, since, until, nil, 10); err != nil || len(page) != 1 || page[0].ID != e1.ID {
		t.Fatalf("subscription B: %v, %v", page, err)
	}
	if page, err := f.st.Deliveries().FailedPage(f.ctx, f.other.WorkspaceID, subA, since, until, nil, 10); err != nil || len(page) != 0 {
		t.Fatalf("another workspace sees %v, %v", page, err)
	}
	// The whole day: e0 and e5 too.
	if page, err := f.st.Deliveries().FailedPage(f.ctx, f.ws.WorkspaceID, subA, base, base.Add(24*time.Hour), nil, 10); err != nil || len(page) != 5 || page[0].ID != e0.ID || page[4].ID != e5.ID {
		t.Fatalf("whole day: %v, %v", page, err)
	}
}

// Delivered tells whether an event's delivery to a subscription left a
// state or a record (events stored before recipients were fixed).
func TestDeliveriesDelivered(t *testing.T) {
	f := newWebhookFixture(t)
	sub := f.create(t, f.ws, true, models.EventType("test.created")).ID
	ev1 := f.publishAt(t, f.ws.WorkspaceID, "test.created", time.Now())
	ev2 := f.publishAt(t, f.ws.WorkspaceID, "test.created", time.Now())
	ev3 := f.publishAt(t, f.ws.WorkspaceID, "test.created", time.Now())
	f.state(t, ev1, sub, "failed", 1, nil, nil)
	f.record(t, ev2, sub, 1, false, nil)
	for ev, want := range map[uuid.UUID]bool{ev1.ID: true, ev2.ID: true, ev3.ID: false} {
		if got, err := f.st.Deliveries().Delivered(f.ctx, sub, ev); err != nil || got != want {
			t.Errorf("event %s: %v, %v; want %v", ev, got, err, want)
		}
	}
}
