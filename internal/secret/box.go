package secret

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// boxVersion leads every sealed value. Rotation does not change it: a
// sealed value names no key, and Open tries each key of the ring instead (a
// failed GCM open costs about a microsecond, and a ring holds two or three
// keys), so values sealed before the ring existed open unchanged.
const boxVersion byte = 1

// ErrNoKey means no encryption key is configured (WEBHOOK_SECRET_KEY).
var ErrNoKey = errors.New("secret: WEBHOOK_SECRET_KEY is not set")

// errOpen deliberately says nothing about why: no key of the ring, tampering
// or a value moved to another row all read the same.
var errOpen = errors.New("secret: cannot decrypt (no configured key opens it, or the value was altered or moved)")

// Box seals webhook signing secrets with AES-256-GCM under a key ring. Seal
// uses the current key; Open accepts any key of the ring, so keys can be
// rotated without downtime. Each value gets a random nonce, and the caller
// binds it to its row with additional data (the subscription id), so a
// ciphertext copied to another row fails to open.
type Box struct {
	// aeads holds one cipher per key, the current key first.
	aeads []cipher.AEAD
}

// NewBox makes a box from 32-byte keys, the current key first (the order of
// WEBHOOK_SECRET_KEY). No key at all is ErrNoKey. Errors name a key by its
// position, never by its bytes.
func NewBox(keys ...[]byte) (*Box, error) {
	if len(keys) == 0 || (len(keys) == 1 && len(keys[0]) == 0) {
		return nil, ErrNoKey
	}
	b := &Box{aeads: make([]cipher.AEAD, 0, len(keys))}
	for i, key := range keys {
		if len(key) != 32 {
			return nil, fmt.Errorf("secret: encryption key %d of %d must be 32 bytes", i+1, len(keys))
		}
		for j := range i {
			if bytes.Equal(key, keys[j]) {
				return nil, fmt.Errorf("secret: encryption key %d repeats key %d", i+1, j+1)
			}
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		b.aeads = append(b.aeads, aead)
	}
	return b, nil
}

// Keys is how many keys the ring holds.
func (b *Box) Keys() int { return len(b.aeads) }

// Seal encrypts plaintext under the current key, bound to ad:
// version || nonce || ciphertext+tag.
func (b *Box) Seal(plaintext, ad []byte) ([]byte, error) {
	aead := b.aeads[0]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+aead.Overhead())
	out = append(out, boxVersion)
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, ad), nil
}

// Open decrypts what Seal made with the same ad, under any key of the ring.
func (b *Box) Open(sealed, ad []byte) ([]byte, error) {
	plain, _, err := b.open(sealed, ad)
	return plain, err
}

// Reseal re-encrypts sealed under the current key and reports whether it
// had to: a value the current key already opens comes back as it is.
func (b *Box) Reseal(sealed, ad []byte) ([]byte, bool, error) {
	plain, key, err := b.open(sealed, ad)
	if err != nil || key == 0 {
		return sealed, false, err
	}
	out, err := b.Seal(plain, ad)
	return out, err == nil, err
}

// open returns the plaintext and the position of the key that opened it.
func (b *Box) open(sealed, ad []byte) ([]byte, int, error) {
	// Every key is AES-256-GCM, so nonce size and overhead are the ring's.
	n, overhead := b.aeads[0].NonceSize(), b.aeads[0].Overhead()
	if len(sealed) < 1+n+overhead || sealed[0] != boxVersion {
		return nil, 0, errOpen
	}
	for i, aead := range b.aeads {
		if plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], ad); err == nil {
			return plain, i, nil
		}
	}
	return nil, 0, errOpen
}
