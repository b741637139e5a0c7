package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// reseal-webhook-secrets also moves sensitive header values to the new key,
// leaving plain ones and the values themselves unchanged; one no key opens
// fails the run, named.
func TestResealWebhookHeaders(t *testing.T) {
	f := newResealSetup(t)
	dsn, db, st, ctx, ws, oldKey, newKey, oldBox, newBox := f.dsn, f.db, f.st, f.ctx, f.ws, f.oldKey, f.newKey, f.oldBox, f.newBox
	create := func(box, headerBox *secret.Box, value string) uuid.UUID {
		t.Helper()
		id := uuid.New()
		signing, _ := box.Seal([]byte("whsec_x"), id[:])
		header, _ := headerBox.Seal([]byte(value), secret.WebhookHeaderBinding(id, "X-Api-Key"))
		if _, err := st.Webhooks().Create(ctx, id, models.NewWebhook{
			WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, URL: "https://example.com/hook",
			EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
			Headers: []models.WebhookHeader{{Name: "X-Api-Key", Sensitive: true, Sealed: header}, {Name: "X-Tenant", Value: "acme"}},
		}, signing, 0); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := create(oldBox, oldBox, "key-a")
	create(newBox, newBox, "key-b")

	t.Setenv("WEBHOOK_SECRET_KEY", enc(newKey)+","+enc(oldKey))
	out, err := admin(t, dsn, "reseal-webhook-secrets")
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, out); got != (resealReport{Checked: 2, Resealed: 1, HeadersResealed: 1}) {
		t.Fatalf("reported %+v, want 2 checked, 1 resealed, 1 with headers resealed", got)
	}
	target, err := st.Webhooks().Target(ctx, a)
	if err != nil || len(target.Headers) != 2 || target.Headers[1].Value != "acme" {
		t.Fatalf("headers after reseal: %+v (%v)", target.Headers, err)
	}
	if got, err := newBox.Open(target.Headers[0].Sealed, secret.WebhookHeaderBinding(a, "x-api-key")); err != nil || string(got) != "key-a" {
		t.Fatalf("the new key alone opens %q (%v), want the unchanged value", got, err)
	}

	lost, _ := secret.NewBox(randomKey())
	lostID := create(newBox, lost, "key-c") // its signing secret is fine
	_, err = admin(t, dsn, "reseal-webhook-secrets")
	if err == nil || !strings.Contains(err.Error(), lostID.String()) || strings.Contains(err.Error(), "key-c") {
		t.Fatalf("with a header no key opens: err %v, want the subscription named", err)
	}
	var raw string
	if err := db.QueryRowContext(ctx, "SELECT headers::text FROM webhook_subscriptions WHERE id = ?", a).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(raw)) || strings.Contains(raw, "key-a") {
		t.Fatalf("stored headers %s", raw)
	}
}
