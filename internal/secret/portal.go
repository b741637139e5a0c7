package secret

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// Prefixes of the portal's secrets, so scanners and the request-id filter
// recognise them: the link's single-use token and the session cookie.
const (
	PortalTokenPrefix  = "olpt_"
	PortalCookiePrefix = "olps_"
)

// NewPortalSecret is a random secret with prefix and the hash to store
// (240 bits, like an API key, so SHA-256 suffices).
func NewPortalSecret(prefix string) (string, []byte, error) {
	b := make([]byte, apiKeyRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	s := prefix + base64.RawURLEncoding.EncodeToString(b)
	return s, HashAPIKey(s), nil
}

// PortalCSRFToken derives a session's CSRF token from its cookie secret:
// a page holds it, a cross-site form cannot know it, and the server needs
// no second secret to check it.
func PortalCSRFToken(cookieSecret string) string {
	m := hmac.New(sha256.New, []byte(cookieSecret))
	m.Write([]byte("portal csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidPortalCSRFToken compares in constant time.
func ValidPortalCSRFToken(cookieSecret, token string) bool {
	return hmac.Equal([]byte(PortalCSRFToken(cookieSecret)), []byte(token))
}
