// Package receiver is the HTTPS webhook receiver of the harnesses that run
// the service as real processes: the benchmark (internal/bench) and the
// production topology's end-to-end test (internal/e2e/stack). It serves
// from the harness's own process, verifies each request's Standard
// Webhooks signature with the reference library, answers 204, and notes
// when each event (webhook-id) arrived at each endpoint. A request it
// cannot verify is counted (Bad) and should fail the run. The fault suite
// keeps a receiver of its own with hostile behaviours (slow, failing,
// resetting), which these harnesses do not need.
package receiver

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Receiver is an HTTPS server holding many endpoints.
type Receiver struct {
	srv *httptest.Server

	mu        sync.Mutex
	endpoints map[string]*Endpoint
	next      int
	bad       atomic.Int64
	firstBad  atomic.Value // string
}

// Endpoint is one subscription's URL on the receiver.
type Endpoint struct {
	url   string
	stall bool // hold every request until the client gives up

	mu   sync.Mutex
	hook *standardwebhooks.Webhook
	at   map[string][]time.Time // receipt times by webhook-id, duplicates included
}

// New starts a receiver on a loopback port with a certificate for
// 127.0.0.1 that only WritePEM's and Pool's holders trust.
func New() *Receiver {
	rc := &Receiver{endpoints: map[string]*Endpoint{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	return rc
}

// Close stops the server.
func (rc *Receiver) Close() { rc.srv.Close() }

// WritePEM writes the receiver's certificate for the worker to trust
// (SSL_CERT_FILE).
func (rc *Receiver) WritePEM(path string) error {
	block := &pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o644)
}

// Pool is a certificate pool trusting the receiver.
func (rc *Receiver) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

// Endpoint adds an endpoint; a stalling one holds every request until
// the client gives up (or a minute passes) and answers nothing.
func (rc *Receiver) Endpoint(stall bool) *Endpoint {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.next++
	path := "/e/" + strconv.Itoa(rc.next)
	e := &Endpoint{url: rc.srv.URL + path, stall: stall, at: map[string][]time.Time{}}
	rc.endpoints[path] = e
	return e
}

// Bad returns how many requests failed verification, and the first's
// reason.
func (rc *Receiver) Bad() (n int64, first string) {
	first, _ = rc.firstBad.Load().(string)
	return rc.bad.Load(), first
}

// URL is the endpoint's address, for a subscription.
func (e *Endpoint) URL() string { return e.url }

// Trust sets the secret e verifies with (its subscription's).
func (e *Endpoint) Trust(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.hook = wh
	e.mu.Unlock()
	return nil
}

func (rc *Receiver) fail(msg string) {
	if rc.bad.Add(1) == 1 {
		rc.firstBad.Store(msg)
	}
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	e := rc.endpoints[r.URL.Path]
	rc.mu.Unlock()
	if e == nil {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	now := time.Now()
	e.mu.Lock()
	hook := e.hook
	e.mu.Unlock()
	if hook == nil {
		rc.fail("a request to " + r.URL.Path + " before its secret was known")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := hook.Verify(body, r.Header); err != nil {
		rc.fail(r.URL.Path + ": " + err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if e.stall {
		// Until the client's attempt times out (or a minute, whichever is first).
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	id := r.Header.Get("webhook-id")
	e.mu.Lock()
	e.at[id] = append(e.at[id], now)
	e.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Counts returns how many distinct events (webhook-ids) e answered 2xx,
// and how many further deliveries of those events it answered
// (duplicates).
func (e *Endpoint) Counts() (distinct, dups int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ts := range e.at {
		distinct++
		dups += int64(len(ts) - 1)
	}
	return distinct, dups
}

// Receipts returns the first receipt time of every event e got.
func (e *Endpoint) Receipts() map[string]time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]time.Time, len(e.at))
	for id, ts := range e.at {
		out[id] = ts[0]
	}
	return out
}
