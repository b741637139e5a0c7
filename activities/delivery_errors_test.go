package activities

import (
	"net"
	"strings"
	"testing"
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
	outcome, text := classify(err)
	if outcome != "connection_error" || !strings.Contains(text, "closed the connection before sending a response") {
		t.Fatalf("classify(%v) = %q, %q", err, outcome, text)
	}
}
