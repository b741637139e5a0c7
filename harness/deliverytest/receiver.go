package deliverytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Request is one request a Receiver got.
type Request struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// Receiver is an HTTP endpoint on loopback that records every request and
// answers the n-th (from 1) with its handler.
type Receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// NewReceiver serves handle until t ends.
func NewReceiver(t testing.TB, handle func(w http.ResponseWriter, n int)) *Receiver {
	t.Helper()
	rc := &Receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, Request{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n := len(rc.reqs)
		rc.mu.Unlock()
		handle(w, n)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Answering is a handler that answers the n-th request with statuses[n-1],
// or the last status once the list runs out.
func Answering(statuses ...int) func(w http.ResponseWriter, n int) {
	return func(w http.ResponseWriter, n int) { w.WriteHeader(statuses[min(n, len(statuses))-1]) }
}

// Requests are the requests received so far, in order.
func (rc *Receiver) Requests() []Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Request(nil), rc.reqs...)
}

// Count is how many requests arrived.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}
