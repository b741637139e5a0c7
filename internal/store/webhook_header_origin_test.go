package store_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// A sensitive value never moves to another host unless sent again: a url
// update to another scheme, host or port is refused while a sensitive
// header would keep its stored value (omitted headers, or the mask), and
// allowed with the value sent again or the header removed; another path
// on the same host keeps it.
func TestWebhookSensitiveHeaderStaysAtItsOrigin(t *testing.T) {
	f := newWebhookFixture(t)
	id := uuid.New()
	_, err := f.st.Webhooks().Create(f.ctx, id, models.NewWebhook{
		WorkspaceID: f.ws.WorkspaceID, CreatorID: f.ws.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		Headers: []models.WebhookHeader{{Name: "X-Api-Key", Sensitive: true, Sealed: []byte("sealed")}, {Name: "X-Tenant", Value: "acme"}},
	}, f.sealed, 0)
	if err != nil {
		t.Fatal(err)
	}
	to := func(u string) *string { return &u }
	masked := []models.WebhookHeader{{Name: "X-Api-Key", Sensitive: true, Keep: true}}
	for _, c := range []struct {
		name string
		u    models.WebhookUpdate
		ok   bool
	}{
		{"another path", models.WebhookUpdate{URL: to("https://EXAMPLE.com:443/other")}, true},
		{"another host, headers kept", models.WebhookUpdate{URL: to("https://attacker.example/in")}, false},
		{"another port, headers kept", models.WebhookUpdate{URL: to("https://example.com:8443/hook")}, false},
		{"another host, the mask", models.WebhookUpdate{URL: to("https://attacker.example/in"), Headers: masked}, false},
		{"another host, the value again", models.WebhookUpdate{URL: to("https://new.example/in"),
			Headers: []models.WebhookHeader{{Name: "X-Api-Key", Sensitive: true, Sealed: []byte("sealed again")}}}, true},
	} {
		_, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, c.u)
		if c.ok && err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !c.ok && !refusesField(err, "headers.X-Api-Key") {
			t.Fatalf("%s: %v, want headers.X-Api-Key refused", c.name, err)
		}
	}
	// The header removed, the endpoint may move anywhere.
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, id, models.WebhookUpdate{URL: to("https://third.example/in"),
		Headers: []models.WebhookHeader{{Name: "X-Tenant", Value: "acme"}}}); err != nil {
		t.Fatal(err)
	}
}

// refusesField reports whether err is a validation error naming field.
func refusesField(err error, field string) bool {
	var me *models.Error
	if !errors.As(err, &me) || !errors.Is(err, models.ErrInvalid) {
		return false
	}
	for _, d := range me.Details {
		if d.Field == field {
			return true
		}
	}
	return false
}
