// Package swverify verifies Standard Webhooks v1a (ed25519) signatures as a
// receiver would, for tests. The reference Go library (standard-webhooks
// libraries/go v0.0.1) verifies only v1, so this follows the specification
// and that library's Verify step for step: the same headers, the same
// five-minute timestamp tolerance, space-separated "version,signature"
// entries of which one must verify, over "{id}.{timestamp}.{body}".
package swverify

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// tolerance is the reference library's.
const tolerance = 5 * time.Minute

// Verifier holds a receiver's whpk_ public key.
type Verifier struct{ key ed25519.PublicKey }

// New parses a whpk_ public key: "whpk_" and the base64 of 32 bytes.
func New(whpk string) (*Verifier, error) {
	raw, ok := strings.CutPrefix(whpk, "whpk_")
	if !ok {
		return nil, errors.New("swverify: not a whpk_ public key")
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("swverify: malformed whpk_ public key")
	}
	return &Verifier{key: b}, nil
}

// Verify checks the request's headers and raw body, as the reference
// library's Webhook.Verify does for v1.
func (v *Verifier) Verify(body []byte, h http.Header) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("swverify: missing required headers")
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("swverify: invalid timestamp header")
	}
	if at := time.Unix(secs, 0); time.Since(at) > tolerance || time.Until(at) > tolerance {
		return errors.New("swverify: timestamp outside the tolerance")
	}
	signed := []byte(id + "." + ts + "." + string(body))
	for _, entry := range strings.Split(sigs, " ") {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1a" {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && ed25519.Verify(v.key, signed, raw) {
			return nil
		}
	}
	return errors.New("swverify: no matching v1a signature found")
}
