package activities_test

import (
	"bytes"
	"log/slog"
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
	var logs bytes.Buffer
	f.Acts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	// "localhost" stands in for an internal DNS name: it is a name (so the
	// create-time literal check would not catch an internal one) that
	// resolves to an internal address. The path and query carry a token,
	// as receivers' URLs often do.
	sub, _ := f.Subscribe(t, strings.Replace(rc.URL, "127.0.0.1", "localhost", 1)+"/hooks/tok-path-1?token=tok-query-2")
	ev := f.Publish(t, `{}`)
	f.attempt(t, ev, sub, 1)
	rec, err := f.Store.Deliveries().Find(f.Ctx, sub.ID, ev.ID, 1)
	if err != nil || rec.ErrorMessage == nil {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if msg := *rec.ErrorMessage; strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "loopback") {
		t.Fatalf("the tenant-visible errorMessage reveals what the name resolved to: %q", msg)
	}
	// The operator's log names the host and the address, never the URL.
	line := logs.String()
	if !strings.Contains(line, "webhook attempt blocked") || !strings.Contains(line, "localhost") || !strings.Contains(line, "127.0.0.1") {
		t.Fatalf("the blocked attempt's log line lacks the host or address: %s", line)
	}
	if strings.Contains(line, "tok-path-1") || strings.Contains(line, "tok-query-2") {
		t.Fatalf("the log line carries the URL's path or query: %s", line)
	}
}
