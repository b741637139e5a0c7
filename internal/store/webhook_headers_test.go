package store_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// Custom headers are stored with the subscription, shown with sensitive
// values masked, read by the attempt's snapshot with the sealed bytes, and
// replaced by an update, whose masked value keeps the stored sealed one.
func TestWebhookHeaders(t *testing.T) {
	f := newWebhookFixture(t)
	sealed := []byte("sealed value of X-Api-Key")
	id := uuid.New()
	w, err := f.st.Webhooks().Create(f.ctx, id, models.NewWebhook{
		WorkspaceID: f.ws.WorkspaceID, CreatorID: f.ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		Headers: []models.WebhookHeader{
			{Name: "X-Api-Key", Sensitive: true, Sealed: sealed},
			{Name: "X-Tenant", Value: "acme"},
		},
	}, f.sealed, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantShown := map[string]string{"X-Api-Key": models.WebhookHeaderMask, "X-Tenant": "acme"}
	if !reflect.DeepEqual(w.Headers, wantShown) || !reflect.DeepEqual(w.SensitiveHeaders, []string{"X-Api-Key"}) {
		t.Fatalf("created: headers %v, sensitive %v", w.Headers, w.SensitiveHeaders)
	}
	got, err := f.st.Webhooks().Get(f.ctx, f.ws.WorkspaceID, id)
	if err != nil || !reflect.DeepEqual(got.Headers, wantShown) || !reflect.DeepEqual(got.SensitiveHeaders, []string{"X-Api-Key"}) {
		t.Fatalf("get: %v, %v (%v)", got.Headers, got.SensitiveHeaders, err)
	}
	page, err := f.st.Webhooks().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 1, PerPage: 10})
	if err != nil || len(page.Items) != 1 || !reflect.DeepEqual(page.Items[0].Headers, wantShown) {
		t.Fatalf("list: %+v (%v)", page.Items, err)
	}

	// The attempt reads both, the sensitive one still sealed.
	st, err := f.st.Deliveries().AttemptState(f.ctx, id, uuid.New(), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []models.WebhookHeader{
		{Name: "X-Api-Key", Sensitive: true, Sealed: sealed},
		{Name: "X-Tenant", Value: "acme"},
	}
	if !reflect.DeepEqual(st.Target.Headers, want) {
		t.Fatalf("attempt state headers %+v, want %+v", st.Target.Headers, want)
	}

	// An update without headers keeps them.
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, models.WebhookUpdate{Description: new("other")}); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.st.Deliveries().AttemptState(f.ctx, id, uuid.New(), 1); !reflect.DeepEqual(st.Target.Headers, want) {
		t.Fatalf("after an update without headers: %+v", st.Target.Headers)
	}

	// The mask keeps the sealed value, under the name as sent now; the
	// plain one is replaced, and the next attempt reads the change.
	up, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, models.WebhookUpdate{Headers: []models.WebhookHeader{
		{Name: "x-api-key", Sensitive: true, Keep: true},
		{Name: "X-Region", Value: "eu"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"x-api-key": models.WebhookHeaderMask, "X-Region": "eu"}; !reflect.DeepEqual(up.Headers, want) {
		t.Fatalf("updated: %v, want %v", up.Headers, want)
	}
	st, _ = f.st.Deliveries().AttemptState(f.ctx, id, uuid.New(), 1)
	if len(st.Target.Headers) != 2 || !bytes.Equal(st.Target.Headers[0].Sealed, sealed) || st.Target.Headers[0].Name != "x-api-key" ||
		!reflect.DeepEqual(st.Target.Headers[1], models.WebhookHeader{Name: "X-Region", Value: "eu"}) {
		t.Fatalf("after the update the attempt reads %+v", st.Target.Headers)
	}

	// A mask with no sensitive value of that name to keep is a 400 naming
	// the header, and changes nothing.
	_, err = f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, models.WebhookUpdate{
		Description: new("not this"),
		Headers:     []models.WebhookHeader{{Name: "X-Region", Sensitive: true, Keep: true}},
	})
	var me *models.Error
	if !errors.Is(err, models.ErrInvalid) || !errors.As(err, &me) || len(me.Details) != 1 || me.Details[0].Field != "headers.X-Region" {
		t.Fatalf("keeping a plain header's value: %v", err)
	}
	if got, _ := f.st.Webhooks().Get(f.ctx, f.ws.WorkspaceID, id); got.Description != "other" || len(got.Headers) != 2 {
		t.Fatalf("a refused update changed %+v", got)
	}

	// Another workspace cannot replace them; an empty list removes them.
	if _, err := f.st.Webhooks().Update(f.ctx, f.other.WorkspaceID, id, models.WebhookUpdate{Headers: []models.WebhookHeader{}}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	up, err = f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, models.WebhookUpdate{Headers: []models.WebhookHeader{}})
	if err != nil || len(up.Headers) != 0 || up.Headers == nil || up.SensitiveHeaders == nil {
		t.Fatalf("cleared: %+v (%v)", up, err)
	}
	if st, _ := f.st.Deliveries().AttemptState(f.ctx, id, uuid.New(), 1); len(st.Target.Headers) != 0 {
		t.Fatalf("after clearing the attempt reads %+v", st.Target.Headers)
	}
}
