package secret

import (
	"crypto/ed25519"
	"errors"
	"strings"
	"time"
)

// WebhookKey is an opened signing key of either scheme: the HMAC key of a
// whsec_ secret (v1) or the ed25519 private key of a whsk_ one (v1a). The
// sealed value's prefix says which, so a rotation never mixes them up.
type WebhookKey struct {
	hmac []byte
	ed   ed25519.PrivateKey
}

// ParseWebhookKey reads an opened signing secret, whsec_ or whsk_.
func ParseWebhookKey(s string) (WebhookKey, error) {
	switch {
	case strings.HasPrefix(s, WebhookSecretPrefix):
		key, err := WebhookSigningKey(s)
		return WebhookKey{hmac: key}, err
	case strings.HasPrefix(s, WebhookSecretKeyPrefix):
		priv, err := WebhookPrivateKey(s)
		return WebhookKey{ed: priv}, err
	}
	return WebhookKey{}, errors.New("secret: neither a whsec_ nor a whsk_ signing secret")
}

// Sign is the key's Standard Webhooks signature, v1 or v1a.
func (k WebhookKey) Sign(id string, timestamp time.Time, body []byte) string {
	if k.ed != nil {
		return SignWebhookV1a(k.ed, id, timestamp, body)
	}
	return SignWebhook(k.hmac, id, timestamp, body)
}

// SignWebhookWith signs with each key, space separated as Standard Webhooks
// allows, so during a rotation's grace a receiver holding either key accepts.
func SignWebhookWith(keys []WebhookKey, id string, timestamp time.Time, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = k.Sign(id, timestamp, body)
	}
	return strings.Join(sigs, " ")
}
