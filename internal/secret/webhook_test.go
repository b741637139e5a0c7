package secret_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/internal/secret"
)

func TestNewWebhookSecretShape(t *testing.T) {
	a, err := secret.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := secret.NewWebhookSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secret %q lacks the whsec_ prefix", a)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if err != nil || len(raw) < 24 {
		t.Fatalf("secret %q: %d random bytes, err %v; want at least 24", a, len(raw), err)
	}
	key, err := secret.WebhookSigningKey(a)
	if err != nil || !bytes.Equal(key, raw) {
		t.Fatalf("signing key %x, err %v; want %x", key, err, raw)
	}
}

func TestWebhookSigningKeyRefusesMalformed(t *testing.T) {
	for _, s := range []string{"", "abc", "whsec_", "whsec_!!!", "whsec_" + base64.StdEncoding.EncodeToString([]byte("short"))} {
		if _, err := secret.WebhookSigningKey(s); err == nil {
			t.Errorf("WebhookSigningKey(%q) accepted", s)
		}
	}
}

// The reference library must accept our signatures, and the raw algorithm
// (documented for receivers) must give the same value.
func TestSignWebhookVerifiesWithStandardWebhooks(t *testing.T) {
	s, _ := secret.NewWebhookSecret()
	key, _ := secret.WebhookSigningKey(s)
	id := uuid.NewString()
	ts := time.Now()
	body := []byte(`{"type":"test.created","timestamp":"2026-11-21T10:00:00Z","data":{"a":1}}`)
	sig := secret.SignWebhook(key, id, ts, body)

	wh, err := standardwebhooks.NewWebhook(s)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", fmt.Sprint(ts.Unix()))
	h.Set("webhook-signature", sig)
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("reference library rejects our signature: %v", err)
	}
	want, _ := wh.Sign(id, ts, body)
	if sig != want {
		t.Fatalf("signature %q, reference library signs %q", sig, want)
	}
	// Any change to the signed content must break it.
	if err := wh.Verify(append(body, ' '), h); err == nil {
		t.Fatal("a changed body still verifies")
	}
	h.Set("webhook-id", uuid.NewString())
	if err := wh.Verify(body, h); err == nil {
		t.Fatal("a changed id still verifies")
	}
}
