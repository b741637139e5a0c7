package activities

import (
	"net"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
)

// A receiver that hangs up before answering is recorded with words a
// customer can act on, not a bare "EOF" (the fault suite's hostile
// receivers found that).
func TestClassifyConnectionClosedBeforeResponse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf) // take the request, then hang up
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, not a clean close
			}
			c.Close()
		}
	}()
	_, err = NewWebhookClient(true).Post("http://"+ln.Addr().String()+"/hook", "application/json", strings.NewReader("{}"))
	if err == nil {
		t.Fatal("no error from a receiver that hung up")
	}
	label, text := classify(err)
	if label != labelConnectionError || !strings.Contains(text, "closed the connection before sending a response") {
		t.Fatalf("classify(%v) = %q, %q", err, label, text)
	}
}

// A name that does not resolve reads exactly like one that resolves to a
// refused address: a tenant cannot probe which internal names exist, and
// the resolver's address stays out of the record.
func TestClassifyUnknownHostLikeBlocked(t *testing.T) {
	_, err := NewWebhookClient(false).Post("https://no-such-host.invalid/hook", "application/json", strings.NewReader("{}"))
	if err == nil {
		t.Fatal("a .invalid host resolved")
	}
	_, unknown := classify(err)
	_, blocked := classify(&netguard.BlockedError{})
	if unknown != blocked || strings.Contains(unknown, "no such host") || strings.Contains(unknown, ":53") {
		t.Fatalf("unknown host: %q; blocked: %q; want the same words, no resolver detail", unknown, blocked)
	}
}
