package api

import (
	"crypto/sha256"

	"github.com/gowebpki/jcs"
)

// bodyHashes are what a request with an Idempotency-Key is compared by:
// canonical is the hash of the body as canonical JSON (RFC 8785: members
// sorted, no insignificant whitespace, strings and numbers in one form),
// so a retry that sends the same parameters in another order or layout is
// the same request, as Stripe compares parameters; a body that is not JSON
// (or has a duplicate member, which canonical JSON refuses) is compared
// byte for byte. raw is the bytes' hash, which rows stored before this
// comparison hold. Numbers compare as JSON numbers (IEEE doubles): 1.0 and
// 1 are the same parameter.
func bodyHashes(body []byte) (canonical, raw []byte) {
	r := sha256.Sum256(body)
	raw = r[:]
	form, err := jcs.Transform(body)
	if err != nil || len(body) == 0 {
		return raw, raw
	}
	c := sha256.Sum256(append([]byte("jcs\x00"), form...))
	return c[:], raw
}
