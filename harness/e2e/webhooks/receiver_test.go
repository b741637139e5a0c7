package webhooks_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// delivery is one request a receiver got, and what it made of it.
type delivery struct {
	id        string
	timestamp string
	body      []byte
	header    http.Header
	verifyErr error // from the Standard Webhooks reference library
	answered  int
	at        time.Time
}

// receiver is a real HTTPS endpoint. It verifies every request with the
// reference library (once it knows the secret) and answers the n-th one
// with statuses[n-1], or the last status when the list runs out, with body
// "answer <status>".
type receiver struct {
	*httptest.Server
	statuses []int

	mu     sync.Mutex
	hook   *standardwebhooks.Webhook
	got    []delivery
	notify chan struct{}
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	rc := &receiver{statuses: statuses, notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

// trust sets the signing secret the receiver verifies with.
func (rc *receiver) trust(t testing.TB, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("reference library refuses the secret %q: %v", secret, err)
	}
	rc.mu.Lock()
	rc.hook = wh
	rc.mu.Unlock()
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	d := delivery{id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"), body: body, header: r.Header.Clone(), at: time.Now()}
	if rc.hook != nil {
		d.verifyErr = rc.hook.Verify(body, r.Header)
	}
	d.answered = rc.statuses[min(len(rc.got)+1, len(rc.statuses))-1]
	rc.got = append(rc.got, d)
	rc.mu.Unlock()
	select {
	case rc.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(d.answered)
	_, _ = io.WriteString(w, "answer "+http.StatusText(d.answered))
}

// wait returns once the receiver has got n requests, failing after timeout.
func (rc *receiver) wait(t *testing.T, n int, timeout time.Duration) []delivery {
	t.Helper()
	deadline := time.After(timeout)
	for {
		rc.mu.Lock()
		got := append([]delivery(nil), rc.got...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-rc.notify:
		case <-deadline:
			t.Fatalf("receiver got %d requests in %v, want %d", len(got), timeout, n)
		}
	}
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}
