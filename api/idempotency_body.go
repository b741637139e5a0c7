package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"

	"github.com/gowebpki/jcs"
)

// bodyHashes are what a request with an Idempotency-Key is compared by:
// canonical is the hash of the body as canonical JSON (RFC 8785: members
// sorted, no insignificant whitespace, strings in one form), so a retry
// that sends the same parameters in another order or layout is the same
// request, as Stripe compares parameters. Canonical JSON writes numbers as
// IEEE doubles, which would make 9007199254740993 and 9007199254740992 (or
// 0.1 and 0.10000000000000001) one request though the event keeps each
// exactly; so a body with a number not already in its canonical form, a
// body that is not JSON, or one with a duplicate member (which canonical
// JSON refuses) is compared byte for byte. raw is the bytes' hash, which
// rows stored before this comparison hold.
func bodyHashes(body []byte) (canonical, raw []byte) {
	r := sha256.Sum256(body)
	raw = r[:]
	if len(body) == 0 || !numbersCanonical(body) {
		return raw, raw
	}
	form, err := jcs.Transform(body)
	if err != nil {
		return raw, raw
	}
	c := sha256.Sum256(append([]byte("jcs\x00"), form...))
	return c[:], raw
}

// numbersCanonical reports whether every number in the JSON body is
// written as canonical JSON writes it (false for a body that is not JSON).
func numbersCanonical(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return errors.Is(err, io.EOF)
		}
		if n, ok := tok.(json.Number); ok {
			form, err := jcs.Transform([]byte(n))
			if err != nil || string(form) != string(n) {
				return false
			}
		}
	}
}
