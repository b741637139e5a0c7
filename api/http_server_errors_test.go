package api_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/app"
)

// Requests Go's HTTP server refuses while reading them never reach the
// router: the answer is net/http's own plain text, without X-Request-Id or
// the JSON error shape, and the connection is closed (docs/api.md, Errors).
// The server is app.Serve's, so its header limit (64 KiB) is the real one.
func TestRequestsRefusedBeforeTheRouter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx, ln, unreachableDatabase(t), time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	send := func(t *testing.T, raw string) *http.Response {
		t.Helper()
		conn, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	// The router's answers carry X-Request-Id, on this server too.
	if resp := send(t, "GET /v1/openapi.json HTTP/1.1\r\nHost: api\r\n\r\n"); resp.StatusCode != http.StatusOK || resp.Header.Get("X-Request-Id") == "" {
		t.Fatalf("a well-formed request: status %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	const get = "GET /v1/projects HTTP/1.1\r\n"
	for _, c := range []struct {
		name, line, header string
		status             int
	}{
		{"a space in a header name", get, "Bad Name: x\r\n", http.StatusBadRequest},
		{"a header line without a colon", get, "NoColon\r\n", http.StatusBadRequest},
		{"a control character in a header value", get, "X-Note: a\x01b\r\n", http.StatusBadRequest},
		{"headers over 64 KiB", get, "X-Big: " + strings.Repeat("a", 80<<10) + "\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"an unsupported Transfer-Encoding", "POST /v1/projects HTTP/1.1\r\n", "Transfer-Encoding: gzip\r\n", http.StatusNotImplemented},
		{"an unsupported HTTP version", "GET /v1/projects HTTP/2.5\r\n", "", http.StatusHTTPVersionNotSupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := send(t, c.line+"Host: api\r\nAuthorization: Bearer olk_x\r\n"+c.header+"\r\n")
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d; body %q", resp.StatusCode, c.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type %q, want text/plain", ct)
			}
			if id := resp.Header.Get("X-Request-Id"); id != "" {
				t.Errorf("X-Request-Id %q: the router ran", id)
			}
			if len(body) == 0 || body[0] == '{' {
				t.Errorf("body %q, want net/http's plain text", body)
			}
			if !resp.Close {
				t.Error("the connection is kept open")
			}
		})
	}
}
