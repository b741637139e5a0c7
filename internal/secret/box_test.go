package secret_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/secret"
)

func newBox(t *testing.T) *secret.Box {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	b, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBoxRoundTrip(t *testing.T) {
	b := newBox(t)
	plain := []byte("whsec_c2VjcmV0")
	sealed, err := b.Seal(plain, []byte("row-1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, plain) {
		t.Fatal("sealed value contains the plaintext")
	}
	again, _ := b.Seal(plain, []byte("row-1"))
	if bytes.Equal(sealed, again) {
		t.Fatal("two seals of the same value are equal: the nonce is not random")
	}
	got, err := b.Open(sealed, []byte("row-1"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v; want %q", got, err, plain)
	}
}

func TestBoxRefuses(t *testing.T) {
	b := newBox(t)
	sealed, _ := b.Seal([]byte("secret"), []byte("row-1"))
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	cases := map[string]struct {
		box    *secret.Box
		sealed []byte
		ad     string
	}{
		"moved to another row": {b, sealed, "row-2"},
		"tampered":             {b, tampered, "row-1"},
		"other key":            {newBox(t), sealed, "row-1"},
		"truncated":            {b, sealed[:10], "row-1"},
		"empty":                {b, nil, "row-1"},
	}
	for name, c := range cases {
		if _, err := c.box.Open(c.sealed, []byte(c.ad)); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

func TestNewBoxKeys(t *testing.T) {
	if _, err := secret.NewBox(nil); !errors.Is(err, secret.ErrNoKey) {
		t.Errorf("no key: err %v, want ErrNoKey", err)
	}
	if _, err := secret.NewBox(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}
