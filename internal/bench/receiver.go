package bench

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

// receiver is the HTTPS server every delivery goes to, in the harness's
// process. It verifies each request's Standard Webhooks signature with the
// reference library, answers, and notes when each event arrived at each
// endpoint. A request it cannot verify is counted in bad and fails the run.
type receiver struct {
	srv *httptest.Server

	mu        sync.Mutex
	endpoints map[string]*endpoint
	next      int
	bad       atomic.Int64
	firstBad  atomic.Value // string
}

// endpoint is one subscription's URL on the receiver.
type endpoint struct {
	path  string
	stall bool // hold every request until the client gives up

	mu   sync.Mutex
	hook *standardwebhooks.Webhook
	at   map[string][]time.Time // receipt times by webhook-id, duplicates included
}

func newReceiver() *receiver {
	rc := &receiver{endpoints: map[string]*endpoint{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	rc.srv.StartTLS()
	return rc
}

func (rc *receiver) close() { rc.srv.Close() }

// writePEM writes the receiver's certificate for the worker to trust.
func (rc *receiver) writePEM(path string) error {
	block := &pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o644)
}

// pool is a certificate pool trusting the receiver.
func (rc *receiver) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(rc.srv.Certificate())
	return p
}

func (rc *receiver) endpoint(stall bool) *endpoint {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.next++
	e := &endpoint{path: "/e/" + strconv.Itoa(rc.next), stall: stall, at: map[string][]time.Time{}}
	rc.endpoints[e.path] = e
	return e
}

func (rc *receiver) url(e *endpoint) string { return rc.srv.URL + e.path }

// trust sets the secret e verifies with.
func (e *endpoint) trust(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.hook = wh
	e.mu.Unlock()
	return nil
}

func (rc *receiver) fail(msg string) {
	if rc.bad.Add(1) == 1 {
		rc.firstBad.Store(msg)
	}
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
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
		rc.fail("a request to " + e.path + " before its secret was known")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := hook.Verify(body, r.Header); err != nil {
		rc.fail(e.path + ": " + err.Error())
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

// counts returns how many distinct events (webhook-ids) e answered 2xx, and
// how many further deliveries of those events it answered (duplicates).
func (e *endpoint) counts() (distinct, dups int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ts := range e.at {
		distinct++
		dups += int64(len(ts) - 1)
	}
	return distinct, dups
}

// receipts returns the first receipt time of every event e got.
func (e *endpoint) receipts() map[string]time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]time.Time, len(e.at))
	for id, ts := range e.at {
		out[id] = ts[0]
	}
	return out
}
