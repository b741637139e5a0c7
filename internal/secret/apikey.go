// Package secret makes and checks the service's secrets: API keys (stored
// only as SHA-256 hashes) and webhook signing secrets (stored encrypted with
// AES-256-GCM, because the worker needs them back to sign deliveries).
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// APIKeyPrefix starts every API key so secret scanners can recognise a leaked one.
const APIKeyPrefix = "olk_"

// apiKeyRandomBytes gives 240 bits of entropy: far beyond guessing, so a fast
// hash (not a password KDF) is the right way to store it.
const apiKeyRandomBytes = 30

// APIKey is a freshly generated key: the secret to show once, the hash to
// store and the hint to show afterwards.
type APIKey struct {
	Secret string
	Hash   []byte
	Hint   string
}

// NewAPIKey generates a random API key.
func NewAPIKey() (APIKey, error) {
	b := make([]byte, apiKeyRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return APIKey{}, err
	}
	s := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return APIKey{Secret: s, Hash: HashAPIKey(s), Hint: APIKeyHint(s)}, nil
}

// HashAPIKey is the lookup hash of a presented secret.
func HashAPIKey(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// APIKeyHint obfuscates a key to its prefix and last four characters.
func APIKeyHint(secret string) string {
	if len(secret) < len(APIKeyPrefix)+8 || !strings.HasPrefix(secret, APIKeyPrefix) {
		return "****"
	}
	return APIKeyPrefix + "..." + secret[len(secret)-4:]
}
