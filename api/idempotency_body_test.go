package api_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"testing"
)

// A retry is the same request when it sends the same parameters: members
// in another order, other whitespace and \u escapes are replayed, as
// Stripe compares parameters; another value is still a mismatch, and so is a number written otherwise (1.0, or an integer
// past a double's precision), since the event keeps it as written. A row
// stored before (by the body's bytes) still replays.
func TestIdempotencyComparesTheCanonicalBody(t *testing.T) {
	h := newHarness(t)
	first := h.publishWithKey(h.admin.Secret, "canon-1", `{"type":"test.created","data":{"n":1,"s":"ab"}}`)
	for _, same := range []string{
		`{"data":{"s":"ab","n":1},"type":"test.created"}`,
		"{ \"type\" : \"test.created\",\n  \"data\": {\"n\": 1, \"s\": \"\\u0061b\"} }",
	} {
		again := h.publishWithKey(h.admin.Secret, "canon-1", same)
		if !replayed(again) || eventID(t, again) != eventID(t, first) {
			t.Fatalf("%s: %d %s, want the first event replayed", same, again.Code, again.Body)
		}
	}
	for _, other := range []string{
		`{"type":"test.created","data":{"n":2,"s":"ab"}}`,
		// Numbers are kept exactly; written otherwise, they are compared as written.
		`{"type":"test.created","data":{"n":1.0,"s":"ab"}}`,
	} {
		if rec := h.publishWithKey(h.admin.Secret, "canon-1", other); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("%s: %d %s, want 422 idempotency_key_mismatch", other, rec.Code, rec.Body)
		}
	}
	// Beyond a double's precision, two integers are two requests.
	h.publishWithKey(h.admin.Secret, "canon-big", `{"type":"test.created","data":{"n":9007199254740993}}`)
	if rec := h.publishWithKey(h.admin.Secret, "canon-big", `{"type":"test.created","data":{"n":9007199254740992}}`); rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("another large integer: %d %s, want 422", rec.Code, rec.Body)
	}
	if n := h.count("events"); n != 2 {
		t.Fatalf("%d events stored, want 2", n)
	}

	// A row stored by an earlier release holds the hash of the bytes.
	legacy := `{"type":"test.created","data":{"n":3}}`
	stored := h.publishWithKey(h.admin.Secret, "canon-2", legacy)
	raw := sha256.Sum256([]byte(legacy))
	if _, err := h.db.ExecContext(context.Background(), `UPDATE idempotency_keys SET request_hash = ? WHERE idempotency_key = 'canon-2'`, raw[:]); err != nil {
		t.Fatal(err)
	}
	if again := h.publishWithKey(h.admin.Secret, "canon-2", legacy); !replayed(again) || eventID(t, again) != eventID(t, stored) {
		t.Fatalf("a row stored by the bytes' hash: %d %s, want it replayed", again.Code, again.Body)
	}
}
