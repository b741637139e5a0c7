package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// boxVersion leads every sealed value, so a later key rotation can tell
// values sealed under another scheme or key generation apart.
const boxVersion byte = 1

// ErrNoKey means no encryption key is configured (WEBHOOK_SECRET_KEY).
var ErrNoKey = errors.New("secret: WEBHOOK_SECRET_KEY is not set")

// errOpen deliberately says nothing about why: wrong key, tampering or a
// value moved to another row all read the same.
var errOpen = errors.New("secret: cannot decrypt (wrong key, or the value was altered or moved)")

// Box seals webhook signing secrets with AES-256-GCM. Each value gets a
// random nonce, and the caller binds it to its row with additional data
// (the subscription id), so a ciphertext copied to another row fails to open.
type Box struct{ aead cipher.AEAD }

// NewBox makes a box from a 32-byte key; an empty key is ErrNoKey.
func NewBox(key []byte) (*Box, error) {
	if len(key) == 0 {
		return nil, ErrNoKey
	}
	if len(key) != 32 {
		return nil, errors.New("secret: the encryption key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext bound to ad: version || nonce || ciphertext+tag.
func (b *Box) Seal(plaintext, ad []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+b.aead.Overhead())
	out = append(out, boxVersion)
	out = append(out, nonce...)
	return b.aead.Seal(out, nonce, plaintext, ad), nil
}

// Open decrypts what Seal made with the same ad.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n+b.aead.Overhead() || sealed[0] != boxVersion {
		return nil, errOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad)
	if err != nil {
		return nil, errOpen
	}
	return plain, nil
}
