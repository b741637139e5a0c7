// Package secret makes and checks the service's secrets: API keys, stored as
// SHA-256 hashes, and webhook signing secrets, encrypted since workers sign with them.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// APIKeyPrefix starts every API key so secret scanners can recognise a leaked one.
const APIKeyPrefix = "olk_"

// apiKeyRandomBytes (240 bits) is unguessable, so a fast hash, not a KDF, suffices.
const apiKeyRandomBytes = 30

// APIKey is a new key: the secret to show once, the hash to store, a hint.
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
