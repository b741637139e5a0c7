package activities_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/swverify"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// sealedKeyPair makes a v1a key pair sealed for the subscription id.
func (f *fixture) sealedKeyPair(t *testing.T, id uuid.UUID) (sealed []byte, whpk string) {
	t.Helper()
	whsk, whpk, err := secret.NewWebhookKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	sealed, err = f.Box.Seal([]byte(whsk), id[:])
	if err != nil {
		t.Fatal(err)
	}
	return sealed, whpk
}

func v1aVerifies(t *testing.T, whpk string, body []byte, h http.Header) bool {
	t.Helper()
	v, err := swverify.New(whpk)
	if err != nil {
		t.Fatal(err)
	}
	return v.Verify(body, h) == nil
}

// A v1a subscription's attempt carries "v1a,<sig>" that its public key
// verifies; during a rotation's grace period "v1a,<new> v1a,<old>", each
// verified by its own key; no v1 signature ever.
func TestAttemptSignsV1a(t *testing.T) {
	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusNoContent) })
	id := uuid.New()
	sealed, first := f.sealedKeyPair(t, id)
	sub, err := f.Store.Webhooks().Create(f.Ctx, id, models.NewWebhook{
		WorkspaceID: f.Workspace.WorkspaceID, CreatorID: f.Workspace.UserID, URL: rc.URL,
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		SignatureScheme: models.SignatureV1a, PublicKey: &first,
	}, sealed, 0)
	if err != nil {
		t.Fatal(err)
	}

	ev := f.Publish(t, `{"n":1}`)
	if res := f.attempt(t, ev, sub, 1); res.Outcome != activities.AttemptDelivered {
		t.Fatalf("result %+v", res)
	}
	got := rc.Requests()[0]
	if h := got.Header.Get("webhook-signature"); !strings.HasPrefix(h, "v1a,") || strings.Contains(h, " ") ||
		!v1aVerifies(t, first, got.Body, got.Header) {
		t.Fatalf("webhook-signature %q: want one v1a signature the public key verifies", h)
	}

	sealed2, second := f.sealedKeyPair(t, id)
	if _, err := f.Store.Webhooks().RotateSecret(f.Ctx, f.Workspace.WorkspaceID, id, sealed2, &second, time.Hour); err != nil {
		t.Fatal(err)
	}
	ev2 := f.Publish(t, `{"n":2}`)
	f.attempt(t, ev2, sub, 1)
	got = rc.Requests()[1]
	sigs := strings.Split(got.Header.Get("webhook-signature"), " ")
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1a,") || !strings.HasPrefix(sigs[1], "v1a,") {
		t.Fatalf("webhook-signature %q: want two v1a signatures during the grace period", got.Header.Get("webhook-signature"))
	}
	for i, pk := range []string{second, first} {
		one := got.Header.Clone()
		one.Set("webhook-signature", sigs[i])
		if !v1aVerifies(t, pk, got.Body, one) {
			t.Errorf("signature %d is not the %s key's", i+1, []string{"new", "old"}[i])
		}
	}
}
