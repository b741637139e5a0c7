package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
)

// InviteTokenPrefix starts every invite token, so secret scanners can tell
// one from an API key.
const InviteTokenPrefix = "oli_"

// InviteToken is a new invite's token: shown once, stored as its hash.
type InviteToken struct {
	Secret string
	Hash   []byte
}

// NewInviteToken generates a random invite token, as unguessable as a key.
func NewInviteToken() (InviteToken, error) {
	b := make([]byte, apiKeyRandomBytes)
	if _, err := rand.Read(b); err != nil {
		return InviteToken{}, err
	}
	s := InviteTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return InviteToken{Secret: s, Hash: HashAPIKey(s)}, nil
}

// InviteTokenMatches compares a presented token with a stored hash in
// constant time, so the time taken says nothing of how much matched.
func InviteTokenMatches(presented string, hash []byte) bool {
	return subtle.ConstantTimeCompare(HashAPIKey(presented), hash) == 1
}
