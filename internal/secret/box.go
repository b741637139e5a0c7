package secret

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// boxVersion leads every sealed value; values name no key, so rotation keeps it.
const boxVersion byte = 1

// ErrNoKey means no encryption key is configured (WEBHOOK_SECRET_KEY).
var ErrNoKey = errors.New("secret: WEBHOOK_SECRET_KEY is not set")

// errOpen says nothing of why: wrong key, tampering and a moved value look alike.
var errOpen = errors.New("secret: cannot decrypt (no configured key opens it, or the value was altered or moved)")

// Box seals signing secrets with AES-256-GCM under a key ring (Seal uses the
// current key, Open any); ad binds a value to its row, so a copy fails to open.
type Box struct {
	aeads []cipher.AEAD // the current key first
}

// NewBox makes a box from 32-byte keys, current first; no key is ErrNoKey.
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

// Seal encrypts under the current key, bound to ad: version||nonce||ciphertext.
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

// Reseal re-encrypts sealed under the current key, reporting whether it had to.
func (b *Box) Reseal(sealed, ad []byte) ([]byte, bool, error) {
	plain, key, err := b.open(sealed, ad)
	if err != nil || key == 0 {
		return sealed, false, err
	}
	out, err := b.Seal(plain, ad)
	return out, err == nil, err
}

func (b *Box) open(sealed, ad []byte) ([]byte, int, error) {
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
