package webhooks_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/openlayer-ai/workspace-service/harness/swverify"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// A v1a subscription's deliveries reach a real HTTPS receiver signed
// "v1a,<ed25519>" (beside its custom header), which verifies them with the whpk_ key the public-key
// endpoint shows; after a rotation with a grace period each delivery
// carries two v1a signatures, each verified by its own key. Beside it a
// v1 subscription is verified by the reference library with its secret,
// before and across its own rotation.
func TestWebhookV1aSignatures(t *testing.T) {
	env := testenv.Start(t)
	signed, plain := newReceiver(t, http.StatusNoContent), newReceiver(t, http.StatusNoContent)
	v1a := subscribe(t, env, nil, map[string]any{"url": signed.URL + "/in", "eventTypes": []string{"test.created"}, "signatureScheme": "v1a",
		"headers": map[string]string{"X-Tenant": "acme"}})
	v1 := subscribe(t, env, plain, map[string]any{"url": plain.URL + "/in", "eventTypes": []string{"test.created"}})
	if v1a.SignatureScheme != models.SignatureV1a || v1a.Secret != "" || v1.SignatureScheme != models.SignatureV1 {
		t.Fatalf("created %+v and %+v", v1a, v1)
	}
	keyPath := wsPath(env, "/webhooks/"+v1a.ID.String()+"/public-key")
	var pk models.WebhookPublicKey
	env.DoJSON(t, http.MethodGet, keyPath, env.AdminKey, nil, http.StatusOK, &pk)
	if pk.PublicKey != v1a.PublicKey || pk.PreviousPublicKey != nil {
		t.Fatalf("public key %+v, want %s", pk, v1a.PublicKey)
	}
	first := verifier(t, pk.PublicKey)

	acc := publish(t, env, "test.created", map[string]any{"testId": "v1a-1"})
	awaitDelivery(t, env, acc.ID, 30*time.Second, nil)
	d := signed.wait(t, 1, 10*time.Second)[0]
	logDelivery(t, d)
	if err := first.Verify(d.body, d.header); err != nil || d.id != acc.ID.String() {
		t.Fatalf("v1a delivery %s: verification %v", d.id, err)
	}
	if sig := d.header.Get("webhook-signature"); !strings.HasPrefix(sig, "v1a,") || strings.Contains(sig, " ") || d.header.Get("X-Tenant") != "acme" {
		t.Fatalf("webhook-signature %q, X-Tenant %q: want one v1a signature and the custom header", sig, d.header.Get("X-Tenant"))
	}
	if p := plain.wait(t, 1, 10*time.Second)[0]; p.verifyErr != nil || !strings.HasPrefix(p.header.Get("webhook-signature"), "v1,") {
		t.Fatalf("v1 delivery: %q, reference library: %v", p.header.Get("webhook-signature"), p.verifyErr)
	}

	// Rotate both with an hour's grace: every delivery carries the new
	// and the previous key's signatures.
	var rotated models.WebhookSecretRotated
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+v1a.ID.String()+"/secret/rotate"), env.AdminKey,
		map[string]any{"gracePeriodHours": 1}, http.StatusOK, &rotated)
	var rotatedV1 models.WebhookSecretRotated
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+v1.ID.String()+"/secret/rotate"), env.AdminKey,
		map[string]any{"gracePeriodHours": 1}, http.StatusOK, &rotatedV1)
	env.DoJSON(t, http.MethodGet, keyPath, env.AdminKey, nil, http.StatusOK, &pk)
	if pk.PublicKey != rotated.PublicKey || rotated.Secret != "" || pk.PreviousPublicKey == nil || *pk.PreviousPublicKey != v1a.PublicKey {
		t.Fatalf("after the rotation: %+v (rotation answered %+v)", pk, rotated)
	}
	second := verifier(t, pk.PublicKey)

	acc2 := publish(t, env, "test.created", map[string]any{"testId": "v1a-2"})
	awaitDelivery(t, env, acc2.ID, 30*time.Second, nil)
	d = signed.wait(t, 2, 10*time.Second)[1]
	logDelivery(t, d)
	sigs := strings.Split(d.header.Get("webhook-signature"), " ")
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1a,") || !strings.HasPrefix(sigs[1], "v1a,") {
		t.Fatalf("webhook-signature %q: want two v1a signatures in the grace period", d.header.Get("webhook-signature"))
	}
	for i, v := range []*swverify.Verifier{second, first} {
		one := d.header.Clone()
		one.Set("webhook-signature", sigs[i])
		if err := v.Verify(d.body, one); err != nil {
			t.Errorf("signature %d does not verify with its key (%s): %v", i+1, []string{"new", "previous"}[i], err)
		}
	}
	p := plain.wait(t, 2, 10*time.Second)[1]
	for name, s := range map[string]string{"new": rotatedV1.Secret, "previous": v1.Secret} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(p.body, p.header); err != nil {
			t.Errorf("v1 delivery after the rotation: the %s secret does not verify it: %v", name, err)
		}
	}
	for _, id := range []string{workflows.DeliveryWorkflowID(acc.ID), workflows.DeliveryWorkflowID(acc2.ID)} {
		h := env.History(t, id)
		b, err := protojson.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "whsk_") || strings.Contains(payloadText(h), "whsk_") {
			t.Fatalf("the history of %s holds a private key", id)
		}
	}
	if logs := env.Logs(); strings.Contains(logs, "whsk_") {
		t.Fatal("a v1a private key is in the processes' logs")
	}
}

func verifier(t *testing.T, whpk string) *swverify.Verifier {
	t.Helper()
	v, err := swverify.New(whpk)
	if err != nil {
		t.Fatalf("public key %q: %v", whpk, err)
	}
	return v
}

// logDelivery shows a delivery as its receiver saw it (go test -v).
func logDelivery(t *testing.T, d delivery) {
	t.Helper()
	names := make([]string, 0, len(d.header))
	for name := range d.header {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString("  " + name + ": " + strings.Join(d.header[name], ", ") + "\n")
	}
	t.Logf("delivery as received:\n%s  body: %s", b.String(), d.body)
}
