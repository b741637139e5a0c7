package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// signatureScheme is v1 or v1a on create, fixed afterwards: every refusal
// is a 400 in the one error shape naming the member.
func TestWebhookSignatureSchemeValidation(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	hook := h.createHook(map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}})
	one := h.hooksPath(hook.ID.String())
	create := func(scheme any) map[string]any {
		return map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}, "signatureScheme": scheme}
	}
	bad := func(name, method, url string, body any) apiCase {
		return apiCase{name: name, method: method, url: url, key: h.admin.Secret, body: body,
			status: http.StatusBadRequest, wantCode: "validation_failed", wantField: "signatureScheme"}
	}
	h.run([]apiCase{
		bad("create: unknown scheme", http.MethodPost, h.hooksPath(), create("v2")),
		bad("create: upper case", http.MethodPost, h.hooksPath(), create("V1A")),
		bad("create: empty", http.MethodPost, h.hooksPath(), create("")),
		bad("create: not a string", http.MethodPost, h.hooksPath(), create(1)),
		bad("update: to v1a", http.MethodPut, one, map[string]any{"signatureScheme": "v1a"}),
		bad("update: to the same v1", http.MethodPut, one, map[string]any{"signatureScheme": "v1", "enabled": true}),
		bad("update: null", http.MethodPut, one, map[string]any{"signatureScheme": nil}),
		{name: "create: null is v1", method: http.MethodPost, url: h.hooksPath(), key: h.admin.Secret, body: create(nil), status: http.StatusCreated},
	})
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, one, h.admin.Secret, nil, http.StatusOK, &sub)
	if sub.SignatureScheme != models.SignatureV1 {
		t.Fatalf("after refused updates the scheme is %q, want v1", sub.SignatureScheme)
	}
}

// A v1a subscription: its creation shows a public key and no secret, the
// sealed private key is its whsk_ pair, the public-key endpoint shows it,
// and a rotation shows the new key beside the previous one for the grace
// period. A v1 subscription has no public key (409); another workspace's
// v1a subscription is not found.
func TestWebhookPublicKey(t *testing.T) {
	keyOpt, box := withKnownWebhookKey(t)
	h := newHarness(t, keyOpt)
	rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, map[string]any{
		"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}, "signatureScheme": "v1a"})
	if rec.Code != http.StatusCreated || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if got := hookMemberNames(t, rec.Body.Bytes()); got != "id,publicKey,signatureScheme" {
		t.Fatalf("creation result has members %s, want id,publicKey,signatureScheme", got)
	}
	var created models.WebhookCreated
	hookDecode(t, rec.Body.Bytes(), &created)
	if created.SignatureScheme != models.SignatureV1a || !strings.HasPrefix(created.PublicKey, "whpk_") {
		t.Fatalf("created %+v", created)
	}
	// The private key is sealed bound to the row and matches the public key.
	whsk, _ := h.storedSecrets(box, created.ID)
	priv, err := secret.WebhookPrivateKey(whsk)
	if err != nil || secret.WebhookPublicKey(priv) != created.PublicKey {
		t.Fatalf("the stored key is not the shown public key's pair (err %v)", err)
	}
	if strings.Contains(rec.Body.String(), strings.TrimPrefix(whsk, "whsk_")[:20]) {
		t.Fatal("the creation result shows the private key")
	}
	var sub models.WebhookSubscription
	h.doJSON(http.MethodGet, h.hooksPath(created.ID.String()), h.admin.Secret, nil, http.StatusOK, &sub)
	if sub.SignatureScheme != models.SignatureV1a {
		t.Fatalf("GET shows scheme %q", sub.SignatureScheme)
	}

	keyPath := h.hooksPath(created.ID.String(), "public-key")
	var pk models.WebhookPublicKey
	h.doJSON(http.MethodGet, keyPath, h.admin.Secret, nil, http.StatusOK, &pk)
	if pk.PublicKey != created.PublicKey || pk.PreviousPublicKey != nil || pk.PreviousExpiresAt != nil {
		t.Fatalf("public key %+v, want %s and no previous", pk, created.PublicKey)
	}

	rec = h.do(http.MethodPost, h.hooksPath(created.ID.String(), "secret", "rotate"), h.admin.Secret, map[string]any{"gracePeriodHours": 1})
	if rec.Code != http.StatusOK || hookMemberNames(t, rec.Body.Bytes()) != "previousSecretExpiresAt,publicKey" {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	var rotated models.WebhookSecretRotated
	hookDecode(t, rec.Body.Bytes(), &rotated)
	h.doJSON(http.MethodGet, keyPath, h.admin.Secret, nil, http.StatusOK, &pk)
	if pk.PublicKey != rotated.PublicKey || pk.PublicKey == created.PublicKey || pk.PreviousPublicKey == nil ||
		*pk.PreviousPublicKey != created.PublicKey || pk.PreviousExpiresAt == nil || !pk.PreviousExpiresAt.Equal(*rotated.PreviousSecretExpiresAt) {
		t.Fatalf("after a rotation: %+v; want %s, previous %s until %v", pk, rotated.PublicKey, created.PublicKey, rotated.PreviousSecretExpiresAt)
	}
	if d := time.Until(*pk.PreviousExpiresAt); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("previous key expires in %v, want an hour", d)
	}
	cur, prev := h.storedSecrets(box, created.ID)
	if !strings.HasPrefix(cur, "whsk_") || prev != whsk {
		t.Fatal("after a rotation the stored keys are not the new pair and the previous one")
	}

	v1 := h.createHook(map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"test.created"}})
	other, err := h.store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	otherPath := "/v1/workspaces/" + other.WorkspaceID.String() + "/webhooks/" + created.ID.String() + "/public-key"
	h.run([]apiCase{
		{name: "v1 subscription", method: http.MethodGet, url: h.hooksPath(v1.ID.String(), "public-key"), key: h.admin.Secret,
			status: http.StatusConflict, wantCode: "signature_scheme_v1"},
		{name: "absent subscription", method: http.MethodGet, url: h.hooksPath(uuid.NewString(), "public-key"), key: h.admin.Secret,
			status: http.StatusNotFound, wantCode: "not_found"},
		{name: "another workspace's id under its own path", method: http.MethodGet, url: otherPath, key: other.Secret,
			status: http.StatusNotFound, wantCode: "not_found"},
		{name: "another workspace's key", method: http.MethodGet, url: keyPath, key: other.Secret,
			status: http.StatusNotFound, wantCode: "not_found"},
	})
	if strings.Contains(h.logs.String(), strings.TrimPrefix(whsk, "whsk_")[:20]) {
		t.Fatal("the private key reached the log")
	}
}
