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

// webhookSecretBytes is above the Standard Webhooks minimum of 24 bytes and
// matches the HMAC-SHA256 block of security (256 bits).
const webhookSecretBytes = 32

// NewWebhookSecret generates a Standard Webhooks signing secret:
// whsec_ followed by the standard base64 of 32 random bytes.
func NewWebhookSecret() (string, error) {
	b := make([]byte, webhookSecretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// WebhookSigningKey is the HMAC key of a signing secret: the base64-decoded
// part after the prefix.
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

// SignWebhook is the Standard Webhooks signature header value,
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>", with timestamp in Unix
// seconds (the same instant as the webhook-timestamp header).
func SignWebhook(key []byte, id string, timestamp time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// SignWebhookWith is the signature header signed with each key in turn,
// space separated ("v1,<sig> v1,<sig>"), as the Standard Webhooks
// specification allows: during a signing-secret rotation's grace period a
// delivery carries the new secret's signature and the old one's, and a
// receiver verifying with either accepts it.
func SignWebhookWith(keys [][]byte, id string, timestamp time.Time, body []byte) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = SignWebhook(k, id, timestamp, body)
	}
	return strings.Join(sigs, " ")
}
