package activities_test

import (
	"net/http"
	"strings"
	"testing"
)

// When a subscription's host name resolves to an internal address the
// attempt is refused, and the delivery record (which the workspace admin
// reads) says only that the destination is not allowed: naming the resolved
// address would let a tenant map the service's internal DNS. The address
// goes to the worker's log.
func TestBlockedAttemptDoesNotRevealResolvedAddress(t *testing.T) {
	f := newFixture(t, false)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	// "localhost" stands in for an internal DNS name: it is a name (so the
	// create-time literal check would not catch an internal one) that
	// resolves to an internal address.
	sub, _ := f.subscribe(t, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1))
	ev := f.event(t, `{}`)
	f.attempt(t, ev, sub, 1)
	rec, err := f.st.Deliveries().Find(f.ctx, sub.ID, ev.ID, 1)
	if err != nil || rec.ErrorMessage == nil {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if msg := *rec.ErrorMessage; strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "loopback") {
		t.Fatalf("the tenant-visible errorMessage reveals what the name resolved to: %q", msg)
	}
}
