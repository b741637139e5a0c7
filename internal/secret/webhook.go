package secret

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// WebhookSecretPrefix starts every Standard Webhooks signing secret.
const WebhookSecretPrefix = "whsec_"

// webhookSecretBytes exceeds the Standard Webhooks minimum and matches HMAC-SHA256.
const webhookSecretBytes = 32

// NewWebhookSecret generates a Standard Webhooks signing secret (whsec_...).
func NewWebhookSecret() (string, error) {
	b := make([]byte, webhookSecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// WebhookSigningKey is the HMAC key of a signing secret.
func WebhookSigningKey(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	if !ok {
		return nil, errors.New("secret: not a whsec_ signing secret")
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) < 24 {
		return nil, errors.New("secret: malformed whsec_ signing secret")
	}
	return key, nil
}

// SignWebhook is the Standard Webhooks signature "v1,<base64 HMAC(id.ts.body)>".
func SignWebhook(key []byte, id string, timestamp time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignWebhookWith signs with each key, space separated as Standard Webhooks
// allows, so during a rotation's grace a receiver holding either secret accepts.
func SignWebhookWith(keys [][]byte, id string, timestamp time.Time, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = SignWebhook(k, id, timestamp, body)
	}
	return strings.Join(sigs, " ")
}
