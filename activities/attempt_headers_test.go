package activities_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// An attempt sends the subscription's custom headers as stored when it
// runs, the sensitive one opened; one no key opens stops the attempt before
// anything is sent, retryably, naming the header but not its value.
func TestAttemptSendsCustomHeaders(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sub, _ := f.Subscribe(t, rc.URL+"/hook")
	const key = "gw_9d2f61a7"
	sealed, err := f.Box.Seal([]byte(key), secret.WebhookHeaderBinding(sub.ID, "X-Api-Key"))
	if err != nil {
		t.Fatal(err)
	}
	setHeaders := func(hs ...models.WebhookHeader) {
		t.Helper()
		if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, sub.ID, models.WebhookUpdate{Headers: hs}); err != nil {
			t.Fatal(err)
		}
	}
	setHeaders(models.WebhookHeader{Name: "X-Api-Key", Sensitive: true, Sealed: sealed}, models.WebhookHeader{Name: "X-Tenant", Value: "acme"})

	ev := f.Publish(t, `{}`)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("result %+v", res)
	}
	h := rc.Requests()[0].Header
	if h.Get("X-Api-Key") != key || h.Get("X-Tenant") != "acme" || h.Get("webhook-id") != ev.ID.String() {
		t.Fatalf("headers %v", h)
	}

	// Sealed for another name: no key opens it under this one.
	setHeaders(models.WebhookHeader{Name: "X-Other", Sensitive: true, Sealed: sealed})
	next := f.Publish(t, `{}`)
	_, err = f.Acts.AttemptDelivery(f.Ctx, &activities.AttemptInput{EventID: next.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.NonRetryable() || appErr.Type() != activities.ErrUndecryptableSecret ||
		!strings.Contains(err.Error(), "X-Other") || strings.Contains(err.Error(), key) {
		t.Fatalf("err %v; want a retryable %s naming X-Other", err, activities.ErrUndecryptableSecret)
	}
	if n := rc.Count(); n != 1 {
		t.Fatalf("receiver got %d requests, want the first only", n)
	}
}
