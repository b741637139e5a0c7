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
	mac.Write(signedContent(id, timestamp, body))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// signedContent is what every scheme signs: "{id}.{unix timestamp}.{body}".
func signedContent(id string, timestamp time.Time, body []byte) []byte {
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	out := make([]byte, 0, len(id)+len(ts)+len(body)+2)
	out = append(out, id...)
	out = append(out, '.')
	out = append(out, ts...)
	out = append(out, '.')
	return append(out, body...)
}
