// Package apiclient is the HTTP client of the harnesses that drive the
// API as a process of its own (the end-to-end tests of
// harness/e2e/metrics and harness/e2e/stack, the benchmark, the fault
// suite): JSON request bodies, a bearer key, and the whole answer read.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client calls one API process with one key.
type Client struct {
	// Name says which process in errors ("api-1"); empty: the URL says.
	Name string
	// Base is the API's root, http://host:port/v1.
	Base string
	// Key is the bearer secret.
	Key string
	// WorkspaceID is the key's workspace, for WSPath.
	WorkspaceID string
	// HTTP sends the requests.
	HTTP *http.Client
}

// New returns a client of the API listening on addr (host:port), with a
// 30 s bound per request.
func New(name, addr, key, workspaceID string) *Client {
	return &Client{Name: name, Base: "http://" + addr + "/v1", Key: key, WorkspaceID: workspaceID,
		HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// WSPath is a path under the key's workspace.
func (c *Client) WSPath(p string) string { return "/workspaces/" + c.WorkspaceID + p }

// Response is one answer, read whole.
type Response struct {
	Status  int
	Body    []byte
	Header  http.Header
	Elapsed time.Duration // from sending to the end of the body
}

// Send sends method path (under Base) with body as JSON (nil: none) and
// reads the answer. Its error is a transport error or timeout: no answer.
func (c *Client) Send(ctx context.Context, method, path string, body any) (Response, error) {
	return c.SendWith(ctx, method, path, nil, body)
}

// SendWith is Send with extra request headers (an Idempotency-Key).
func (c *Client) SendWith(ctx context.Context, method, path string, header http.Header, body any) (Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Response{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, values := range header {
		req.Header[http.CanonicalHeaderKey(name)] = values
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	begin := time.Now()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Response{Elapsed: time.Since(begin)}, c.errorf(method, path, "%w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Body: out, Header: resp.Header, Elapsed: time.Since(begin)}
	if err != nil {
		return r, c.errorf(method, path, "reading the answer: %w", err)
	}
	return r, nil
}

// Expect sends a request, fails unless the answer's status is want, and
// decodes its JSON body into out (nil: not decoded).
func (c *Client) Expect(ctx context.Context, method, path string, body any, want int, out any) error {
	r, err := c.Send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if r.Status != want {
		return c.errorf(method, path, "status %d, want %d: %s", r.Status, want, bytes.TrimSpace(r.Body))
	}
	if out != nil {
		if err := json.Unmarshal(r.Body, out); err != nil {
			return c.errorf(method, path, "decode %s: %w", r.Body, err)
		}
	}
	return nil
}

func (c *Client) errorf(method, path, format string, args ...any) error {
	who := c.Name
	if who == "" {
		who = c.Base
	}
	return fmt.Errorf("%s %s %s: %w", who, method, path, fmt.Errorf(format, args...))
}
