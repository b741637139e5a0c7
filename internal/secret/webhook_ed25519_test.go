package secret_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/openlayer-ai/workspace-service/harness/swverify"
	"github.com/openlayer-ai/workspace-service/internal/secret"
)

func TestNewWebhookKeyPairShape(t *testing.T) {
	whsk, whpk, err := secret.NewWebhookKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := secret.NewWebhookKeyPair()
	if whsk == other {
		t.Fatal("two secret keys are equal")
	}
	sk, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsk, "whsk_"))
	if !strings.HasPrefix(whsk, "whsk_") || err != nil || len(sk) != ed25519.PrivateKeySize {
		t.Fatalf("secret key %q: %d bytes, err %v; want whsk_ and 64 bytes", whsk, len(sk), err)
	}
	pk, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whpk, "whpk_"))
	if !strings.HasPrefix(whpk, "whpk_") || err != nil || len(pk) != ed25519.PublicKeySize {
		t.Fatalf("public key %q: %d bytes, err %v; want whpk_ and 32 bytes", whpk, len(pk), err)
	}
	priv, err := secret.WebhookPrivateKey(whsk)
	if err != nil || secret.WebhookPublicKey(priv) != whpk {
		t.Fatalf("the secret key's public key is %q (err %v), want %q", secret.WebhookPublicKey(priv), err, whpk)
	}
	// The 32-byte seed form names the same key.
	seed := "whsk_" + base64.StdEncoding.EncodeToString(priv.Seed())
	if p, err := secret.WebhookPrivateKey(seed); err != nil || !p.Equal(priv) {
		t.Fatalf("seed form: err %v", err)
	}
}

func TestWebhookPrivateKeyRefusesMalformed(t *testing.T) {
	whsk, _, _ := secret.NewWebhookKeyPair()
	sk, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsk, "whsk_"))
	sk[63] ^= 1 // a public half that is not the seed's
	for _, s := range []string{"", "whsk_", "whsk_!!!", "whsec_" + strings.TrimPrefix(whsk, "whsk_"),
		"whsk_" + base64.StdEncoding.EncodeToString([]byte("short")), "whsk_" + base64.StdEncoding.EncodeToString(sk)} {
		if _, err := secret.WebhookPrivateKey(s); err == nil {
			t.Errorf("WebhookPrivateKey(%q) accepted", s)
		}
	}
}

func headers(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("webhook-signature", sig)
	return h
}

// A v1a signature has the spec's form, verifies with the public key over
// the id, timestamp and body, and with no other key or content.
func TestSignWebhookV1aVerifies(t *testing.T) {
	whsk, whpk, _ := secret.NewWebhookKeyPair()
	_, otherPK, _ := secret.NewWebhookKeyPair()
	key, err := secret.ParseWebhookKey(whsk)
	if err != nil {
		t.Fatal(err)
	}
	id, ts, body := uuid.NewString(), time.Now(), []byte(`{"type":"test.created","data":{"a":1}}`)
	sig := key.Sign(id, ts, body)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sig, "v1a,"))
	if !strings.HasPrefix(sig, "v1a,") || err != nil || len(raw) != ed25519.SignatureSize {
		t.Fatalf("signature %q: want v1a, and 64 bytes of base64", sig)
	}
	v, _ := swverify.New(whpk)
	if err := v.Verify(body, headers(id, ts, sig)); err != nil {
		t.Fatalf("our v1a signature does not verify: %v", err)
	}
	other, _ := swverify.New(otherPK)
	for name, c := range map[string]struct {
		v    *swverify.Verifier
		body []byte
		h    http.Header
	}{
		"other key":     {other, body, headers(id, ts, sig)},
		"changed body":  {v, append(body, ' '), headers(id, ts, sig)},
		"changed id":    {v, body, headers(uuid.NewString(), ts, sig)},
		"changed time":  {v, body, headers(id, ts.Add(time.Second), sig)},
		"as v1 entry":   {v, body, headers(id, ts, "v1,"+strings.TrimPrefix(sig, "v1a,"))},
		"stale message": {v, body, headers(id, ts.Add(-time.Hour), key.Sign(id, ts.Add(-time.Hour), body))},
	} {
		if err := c.v.Verify(c.body, c.h); err == nil {
			t.Errorf("%s: verifies", name)
		}
	}
	// A v1 receiver (the reference library) finds no v1 entry to accept.
	whsec, _ := secret.NewWebhookSecret()
	wh, _ := standardwebhooks.NewWebhook(whsec)
	if err := wh.Verify(body, headers(id, ts, sig)); err == nil {
		t.Error("the reference v1 verifier accepts a v1a signature")
	}
}

// During a v1a rotation's grace period the header carries both keys'
// signatures, and a receiver holding either public key accepts.
func TestSignWebhookWithBothKeyPairs(t *testing.T) {
	oldSK, oldPK, _ := secret.NewWebhookKeyPair()
	newSK, newPK, _ := secret.NewWebhookKeyPair()
	oldK, _ := secret.ParseWebhookKey(oldSK)
	newK, _ := secret.ParseWebhookKey(newSK)
	id, ts, body := uuid.NewString(), time.Now(), []byte(`{}`)
	h := headers(id, ts, secret.SignWebhookWith([]secret.WebhookKey{newK, oldK}, id, ts, body))
	if parts := strings.Split(h.Get("webhook-signature"), " "); len(parts) != 2 || parts[0] != newK.Sign(id, ts, body) {
		t.Fatalf("header %q, want the new key's signature, a space, the old one's", h.Get("webhook-signature"))
	}
	for name, pk := range map[string]string{"new": newPK, "old": oldPK} {
		v, _ := swverify.New(pk)
		if err := v.Verify(body, h); err != nil {
			t.Errorf("verifying with the %s public key: %v", name, err)
		}
	}
}

func TestParseWebhookKeyRefuses(t *testing.T) {
	for _, s := range []string{"", "whpk_AAAA", "v1,abc", "whsec_", "whsk_"} {
		if _, err := secret.ParseWebhookKey(s); err == nil {
			t.Errorf("ParseWebhookKey(%q) accepted", s)
		}
	}
}
