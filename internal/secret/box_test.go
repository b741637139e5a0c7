package secret_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
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

func randomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

// Rotation: a value sealed under the old key opens once the new key is
// prepended, new values are sealed under the new key, Reseal moves old
// values over, and the row binding holds under every key.
func TestBoxRotation(t *testing.T) {
	oldKey, newKey := randomKey(), randomKey()
	before, _ := secret.NewBox(oldKey)
	ring, err := secret.NewBox(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	onlyNew, _ := secret.NewBox(newKey)
	plain, ad := []byte("whsec_c2VjcmV0"), []byte("row-1")

	sealedOld, _ := before.Seal(plain, ad)
	if got, err := ring.Open(sealedOld, ad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the ring does not open a value sealed under its old key: %q, %v", got, err)
	}
	if _, err := onlyNew.Open(sealedOld, ad); err == nil {
		t.Fatal("the new key alone opens a value sealed under the old key")
	}

	sealedNew, _ := ring.Seal(plain, ad)
	if got, err := onlyNew.Open(sealedNew, ad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the ring does not seal under its first key: %q, %v", got, err)
	}
	if _, err := before.Open(sealedNew, ad); err == nil {
		t.Fatal("the old key opens a value sealed by the ring")
	}

	resealed, changed, err := ring.Reseal(sealedOld, ad)
	if err != nil || !changed {
		t.Fatalf("Reseal of an old value: changed %v, err %v", changed, err)
	}
	if got, err := onlyNew.Open(resealed, ad); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("a resealed value does not open under the new key: %q, %v", got, err)
	}
	same, changed, err := ring.Reseal(sealedNew, ad)
	if err != nil || changed || !bytes.Equal(same, sealedNew) {
		t.Fatalf("Reseal of a current value: changed %v, err %v", changed, err)
	}

	for name, c := range map[string]struct {
		box    *secret.Box
		sealed []byte
		ad     string
	}{
		"old value moved to another row": {ring, sealedOld, "row-2"},
		"new value moved to another row": {ring, sealedNew, "row-2"},
		"ring of unrelated keys":         {newBoxOf(t, randomKey(), randomKey()), sealedOld, "row-1"},
	} {
		if _, err := c.box.Open(c.sealed, []byte(c.ad)); err == nil {
			t.Errorf("%s: opened", name)
		}
		if _, _, err := c.box.Reseal(c.sealed, []byte(c.ad)); err == nil {
			t.Errorf("%s: resealed", name)
		}
	}
}

func newBoxOf(t *testing.T, keys ...[]byte) *secret.Box {
	t.Helper()
	b, err := secret.NewBox(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A bad ring is refused, naming the key by position and never by its bytes.
func TestNewBoxRing(t *testing.T) {
	a, b := randomKey(), randomKey()
	if box := newBoxOf(t, a, b); box.Keys() != 2 {
		t.Errorf("Keys() = %d, want 2", box.Keys())
	}
	if _, err := secret.NewBox(); !errors.Is(err, secret.ErrNoKey) {
		t.Errorf("no keys: err %v, want ErrNoKey", err)
	}
	for name, c := range map[string]struct {
		keys [][]byte
		want string
	}{
		"duplicate":   {[][]byte{a, b, a}, "key 3 repeats key 1"},
		"short":       {[][]byte{a, b[:16]}, "key 2 of 2"},
		"empty first": {[][]byte{nil, a}, "key 1 of 2"},
	} {
		_, err := secret.NewBox(c.keys...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to say %q", name, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), string(a)) || strings.Contains(err.Error(), fmt.Sprintf("%x", a[:4]))) {
			t.Errorf("%s: the error shows key material: %v", name, err)
		}
	}
}
