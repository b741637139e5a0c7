package secret

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// Standard Webhooks' asymmetric (v1a) key prefixes: the service keeps the
// whsk_ secret key, a receiver needs only the whpk_ public key.
const (
	WebhookSecretKeyPrefix = "whsk_"
	WebhookPublicKeyPrefix = "whpk_"
)

// NewWebhookKeyPair generates an ed25519 key pair: the secret key to seal
// (whsk_ + base64 of the 64-byte private key) and the public key to show.
func NewWebhookKeyPair() (whsk, whpk string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	return WebhookSecretKeyPrefix + base64.StdEncoding.EncodeToString(priv),
		WebhookPublicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// WebhookPrivateKey parses a whsk_ secret key: the 64-byte private key or its 32-byte seed.
func WebhookPrivateKey(whsk string) (ed25519.PrivateKey, error) {
	raw, ok := strings.CutPrefix(whsk, WebhookSecretKeyPrefix)
	if !ok {
		return nil, errors.New("secret: not a whsk_ secret key")
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	switch {
	case err != nil:
	case len(b) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(b), nil
	case len(b) == ed25519.PrivateKeySize:
		// A tampered public half would make signatures nobody verifies.
		priv := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
		if priv.Equal(ed25519.PrivateKey(b)) {
			return priv, nil
		}
	}
	return nil, errors.New("secret: malformed whsk_ secret key")
}

// WebhookPublicKey is the whpk_ form of a private key's public half.
func WebhookPublicKey(priv ed25519.PrivateKey) string {
	return WebhookPublicKeyPrefix + base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))
}

// SignWebhookV1a is the Standard Webhooks signature "v1a,<base64 ed25519(id.ts.body)>".
func SignWebhookV1a(priv ed25519.PrivateKey, id string, timestamp time.Time, body []byte) string {
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signedContent(id, timestamp, body)))
}
