package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

func TestEventsCreateAndGet(t *testing.T) {
	f := newWebhookFixture(t)
	// No subscription takes it: it needs no workflow and is stored dispatched.
	lone, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestUpdated, Data: json.RawMessage(`{}`)})
	if err != nil || lone.DispatchedAt == nil || !lone.DispatchedAt.Equal(lone.DateCreated) {
		t.Fatalf("event without recipients %+v, %v: want stored dispatched at its creation", lone, err)
	}
	if got, err := f.st.Events().Get(f.ctx, lone.ID); err != nil || got.DispatchedAt == nil || !got.DispatchedAt.Equal(*lone.DispatchedAt) {
		t.Fatalf("stored %+v, %v: want the returned dispatched_at", got, err)
	}
	f.create(t, f.ws, true, models.EventTestUpdated)
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{
		WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestUpdated, Data: json.RawMessage(`{"b": [1, 2], "a": "x"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if ev.DispatchedAt != nil || len(ev.Recipients) != 1 {
		t.Fatalf("event with a recipient %+v: want undispatched", ev)
	}
	got, err := f.st.Events().Get(f.ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(got.Data, &data); err != nil || data["a"] != "x" || len(data["b"].([]any)) != 2 {
		t.Fatalf("data %s, %v", got.Data, err)
	}
	if got.Type != models.EventTestUpdated || got.WorkspaceID != f.ws.WorkspaceID || !got.DateCreated.Equal(ev.DateCreated) {
		t.Fatalf("got %+v, want %+v", got, ev)
	}
	if _, err := f.st.Events().Get(f.ctx, uuid.New()); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("missing event: %v", err)
	}
}

// JSON that Go accepts but jsonb refuses is the caller's fault. (The API
// refuses a \u0000 in a string before it gets here; the store's answer
// to one is the same 4xx.)
func TestEventsCreateRefusesWhatJSONBCannotHold(t *testing.T) {
	f := newWebhookFixture(t)
	for name, data := range map[string]string{
		"huge number":          `{"a":1e1000000}`,
		"huge negative number": `{"a":[-1e200000]}`,
		"NUL escape":           `{"a":"x\u0000"}`,
	} {
		_, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(data)})
		if !errors.Is(err, models.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
}

func TestEventsOutbox(t *testing.T) {
	f := newWebhookFixture(t)
	f.create(t, f.ws, true, models.EventTestCreated) // a recipient, so the events wait for workflows
	evs := f.createEvents(t, 3)
	if err := f.st.Events().MarkManyDispatched(f.ctx, []uuid.UUID{evs[1].ID}); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 10, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != evs[0].ID || got[1].ID != evs[2].ID || got[0].Type != models.EventTestCreated {
		t.Fatalf("claimed %+v, want events 0 and 2 oldest first", got)
	}
	// The first mark wins.
	first, _ := f.st.Events().Get(f.ctx, evs[1].ID)
	if err := f.st.Events().MarkManyDispatched(f.ctx, []uuid.UUID{evs[1].ID}); err != nil {
		t.Fatal(err)
	}
	again, _ := f.st.Events().Get(f.ctx, evs[1].ID)
	if first.DispatchedAt == nil || !again.DispatchedAt.Equal(*first.DispatchedAt) {
		t.Fatalf("dispatched_at moved from %v to %v", first.DispatchedAt, again.DispatchedAt)
	}
}

// Recipients are fixed by the insert: the workspace's enabled subscriptions
// to the type at that instant, nothing disabled, of another type or of
// another workspace, and nothing created or re-enabled afterwards.
func TestEventsRecipientsFixedAtAcceptance(t *testing.T) {
	f := newWebhookFixture(t)
	a := f.create(t, f.ws, true, models.EventTestCreated)
	b := f.create(t, f.ws, true, models.EventTestCreated, models.EventTestDeleted)
	disabled := f.create(t, f.ws, false, models.EventTestCreated)
	f.create(t, f.ws, true, models.EventTestDeleted)
	f.create(t, f.other, true, models.EventTestCreated)

	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []uuid.UUID{a.ID, b.ID}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return bytes.Compare(x[:], y[:]) })
	if !slices.Equal(ev.Recipients, want) {
		t.Fatalf("recipients %v, want %v", ev.Recipients, want)
	}
	// Re-enabling or adding a subscription later changes nothing stored.
	on := true
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, disabled.ID, models.WebhookUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	f.create(t, f.ws, true, models.EventTestCreated)
	got, err := f.st.Events().Get(f.ctx, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Recipients, want) {
		t.Fatalf("stored recipients %v, want %v", got.Recipients, want)
	}

	// No subscription: an empty list, told apart from the NULL of events
	// stored before recipients were recorded.
	none, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestsResultUpdated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if none.Recipients == nil || len(none.Recipients) != 0 {
		t.Fatalf("no recipients: %#v, want an empty, non-nil list", none.Recipients)
	}
	if _, err := f.st.DB().ExecContext(f.ctx, "UPDATE events SET recipients = NULL WHERE id = ?", none.ID); err != nil {
		t.Fatal(err)
	}
	if legacy, err := f.st.Events().Get(f.ctx, none.ID); err != nil || legacy.Recipients != nil {
		t.Fatalf("legacy event: recipients %#v, %v; want nil", legacy.Recipients, err)
	}
}

// Dispatchers lease disjoint batches, and a leased event is not claimed
// again until it is released or its lease ends.
func TestEventsClaimUndispatched(t *testing.T) {
	f := newWebhookFixture(t)
	f.create(t, f.ws, true, models.EventTestCreated) // a recipient, so the events wait for workflows
	var ids []uuid.UUID
	for _, ev := range f.createEvents(t, 40) {
		ids = append(ids, ev.ID)
	}
	// The API's clock may run ahead of the database's: events stamped in
	// the database's future are claimed at once all the same.
	if _, err := f.st.DB().ExecContext(f.ctx, `UPDATE events SET date_created = now() + interval '5 seconds'`); err != nil {
		t.Fatal(err)
	}

	// Two sweepers at once, several rounds: disjoint, and together all.
	seen := map[uuid.UUID]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 4 {
				got, err := f.st.Events().ClaimUndispatched(f.ctx, 7, time.Minute, nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, ev := range got {
					seen[ev.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 40 {
		t.Fatalf("claimed %d distinct events of 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s claimed %d times", id, n)
		}
	}
	// All leased: nothing more to claim. Released ones come back; marked
	// ones never do; an ended lease frees the rest.
	if got, _ := f.st.Events().ClaimUndispatched(f.ctx, 100, time.Minute, nil); len(got) != 0 {
		t.Fatalf("claimed %d leased events", len(got))
	}
	if err := f.st.Events().ReleaseClaims(f.ctx, ids[:5]); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Events().MarkManyDispatched(f.ctx, ids[5:10]); err != nil {
		t.Fatal(err)
	}
	got, err := f.st.Events().ClaimUndispatched(f.ctx, 100, time.Minute, nil)
	if err != nil || len(got) != 5 {
		t.Fatalf("after releasing 5: claimed %d (%v)", len(got), err)
	}
	if _, err := f.st.DB().ExecContext(f.ctx, `UPDATE events SET dispatch_claimed_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	got, err = f.st.Events().ClaimUndispatched(f.ctx, 100, time.Minute, nil)
	if err != nil || len(got) != 35 {
		t.Fatalf("after every lease ended: claimed %d of the 35 undispatched (%v)", len(got), err)
	}
	for i := 1; i < len(got); i++ {
		if got[i].DateCreated.Before(got[i-1].DateCreated) {
			t.Fatal("claims are not oldest first")
		}
	}
}
