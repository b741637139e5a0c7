package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// webhookFixture is a fresh database with two workspaces.
type webhookFixture struct {
	st     *store.Store
	ws     store.Credentials
	other  store.Credentials
	ctx    context.Context
	sealed []byte
}

func newWebhookFixture(t *testing.T) *webhookFixture {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	ctx := context.Background()
	ws, err := st.Bootstrap(ctx, "One", "one-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.Bootstrap(ctx, "Two", "two-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return &webhookFixture{st: st, ws: ws, other: other, ctx: ctx, sealed: []byte{1, 2, 3}}
}

func (f *webhookFixture) create(t *testing.T, creds store.Credentials, enabled bool, types ...models.EventType) models.WebhookSubscription {
	t.Helper()
	w, err := f.st.Webhooks().Create(f.ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: creds.WorkspaceID, CreatorID: creds.UserID, URL: "https://example.com/hook",
		Description: "d", EventTypes: types, Enabled: enabled,
	}, f.sealed, 0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// createEvents stores n test.created events of the fixture's workspace,
// oldest first.
func (f *webhookFixture) createEvents(t *testing.T, n int) []models.Event {
	t.Helper()
	evs := make([]models.Event, n)
	for i := range evs {
		ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		evs[i] = ev
	}
	return evs
}

func TestWebhooksCRUD(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated, models.EventTestDeleted)
	if w.CreatorID == nil || *w.CreatorID != f.ws.UserID || w.WorkspaceID != f.ws.WorkspaceID || !w.Enabled {
		t.Fatalf("created %+v", w)
	}
	got, err := f.st.Webhooks().Get(f.ctx, f.ws.WorkspaceID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != w.URL || len(got.EventTypes) != 2 || got.EventTypes[1] != models.EventTestDeleted || !got.DateCreated.Equal(w.DateCreated) {
		t.Fatalf("get %+v, want %+v", got, w)
	}

	// Another workspace sees nothing.
	if _, err := f.st.Webhooks().Get(f.ctx, f.other.WorkspaceID, w.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other workspace get: %v", err)
	}
	if _, err := f.st.Webhooks().Update(f.ctx, f.other.WorkspaceID, w.ID, models.WebhookUpdate{Enabled: new(false)}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other workspace update: %v", err)
	}
	if err := f.st.Webhooks().Delete(f.ctx, f.other.WorkspaceID, w.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other workspace delete: %v", err)
	}

	// Update changes only what is set.
	url := "https://example.org/other"
	up, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, w.ID, models.WebhookUpdate{
		URL: &url, EventTypes: []models.EventType{models.EventTestsResultUpdated},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.URL != url || len(up.EventTypes) != 1 || up.EventTypes[0] != models.EventTestsResultUpdated ||
		up.Description != "d" || !up.Enabled || !up.DateUpdated.After(w.DateUpdated) || !up.DateCreated.Equal(w.DateCreated) {
		t.Fatalf("updated %+v", up)
	}
	up, err = f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, w.ID, models.WebhookUpdate{Enabled: new(false), Description: new("")})
	if err != nil || up.Enabled || up.Description != "" || up.URL != url {
		t.Fatalf("updated %+v, %v", up, err)
	}

	// The sealed secret is kept for the delivery path only.
	target, err := f.st.Webhooks().Target(f.ctx, w.ID)
	if err != nil || string(target.SecretCiphertext) != string(f.sealed) || target.Enabled || target.URL != url {
		t.Fatalf("target %+v, %v", target, err)
	}

	if err := f.st.Webhooks().Delete(f.ctx, f.ws.WorkspaceID, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Webhooks().Get(f.ctx, f.ws.WorkspaceID, w.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if _, err := f.st.Webhooks().Target(f.ctx, w.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("target after delete: %v", err)
	}
	if err := f.st.Webhooks().Delete(f.ctx, f.ws.WorkspaceID, w.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestWebhooksListPages(t *testing.T) {
	f := newWebhookFixture(t)
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, f.create(t, f.ws, true, models.EventTestCreated).ID)
	}
	f.create(t, f.other, true, models.EventTestCreated)

	page, err := f.st.Webhooks().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 2, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := models.PageMeta{Page: 2, PerPage: 2, TotalItems: 5, TotalPages: 3}
	if page.Meta != want || len(page.Items) != 2 {
		t.Fatalf("meta %+v with %d items, want %+v with 2", page.Meta, len(page.Items), want)
	}
	// Newest first: page 2 holds the 3rd and 2nd created.
	if page.Items[0].ID != ids[2] || page.Items[1].ID != ids[1] {
		t.Fatalf("page 2 holds %v, %v; want %v, %v", page.Items[0].ID, page.Items[1].ID, ids[2], ids[1])
	}
	past, err := f.st.Webhooks().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 9, PerPage: 2})
	if err != nil || past.Meta.TotalItems != 5 || len(past.Items) != 0 || past.Items == nil {
		t.Fatalf("past the end: %+v, %v", past, err)
	}
}
