// Package receiver is the HTTPS webhook receiver of the harnesses that run
// the service as real processes: the benchmark (harness/bench), the
// production topology's end-to-end test (harness/e2e/stack) and the
// fault suite (harness/reliability). It serves from the harness's own
// process, verifies each request's Standard Webhooks signature with the
// reference library and notes, per endpoint and event (webhook-id), how
// many verified requests arrived, how many 2xx answers reached the
// client, and when. An endpoint answers 204, or stalls, or answers as the
// harness's Answer says (the fault suite's slow, failing and resetting
// receivers). A request it cannot verify is refused and noted (Bad,
// Refusals), and should fail the run.
package receiver

import (
	"crypto/tls"
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
	refusals  []string
}

// Answer writes an endpoint's answer to its nth verified request for one
// event (nth counts from 1) and returns the status it wrote: 0 when it
// wrote none (a reset connection, a client that gave up).
type Answer func(w http.ResponseWriter, r *http.Request, nth int) int

// Endpoint is one subscription's URL on the receiver.
type Endpoint struct {
	url      string
	answer   Answer
	inFlight atomic.Int64

	mu      sync.Mutex
	hook    *standardwebhooks.Webhook
	byEvent map[string]*Got
}

// Got is what an endpoint received for one event.
type Got struct {
	// N counts the requests that arrived with a valid signature.
	N int
	// Completed2xx counts the 2xx answers written while the client still
	// listened; After2xx the requests that arrived after one was.
	Completed2xx, After2xx int
	// First2xx is when the first request answered 2xx arrived.
	First2xx time.Time
}

// New starts a receiver on a loopback port with a certificate for
// 127.0.0.1 that only WritePEM's and Pool's holders trust.
func New() *Receiver { return start(nil) }

// NewWithCert starts a receiver presenting cert (one nobody trusts, to
// check that the worker refuses it).
func NewWithCert(cert tls.Certificate) *Receiver { return start(&cert) }

func start(cert *tls.Certificate) *Receiver {
	rc := &Receiver{endpoints: map[string]*Endpoint{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	// Refused handshakes (an untrusted receiver's whole point) and
	// clients that give up are expected.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if cert != nil {
		rc.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
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

// Endpoint adds an endpoint answering 204; a stalling one holds every
// request until the client gives up (or a minute passes) and answers
// nothing.
func (rc *Receiver) Endpoint(stall bool) *Endpoint {
	if stall {
		return rc.EndpointAnswering(stallAnswer)
	}
	return rc.EndpointAnswering(func(w http.ResponseWriter, _ *http.Request, _ int) int {
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent
	})
}

// EndpointAnswering adds an endpoint whose verified requests answer
// answers.
func (rc *Receiver) EndpointAnswering(answer Answer) *Endpoint {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.next++
	path := "/e/" + strconv.Itoa(rc.next)
	e := &Endpoint{url: rc.srv.URL + path, answer: answer, byEvent: map[string]*Got{}}
	rc.endpoints[path] = e
	return e
}

func stallAnswer(_ http.ResponseWriter, r *http.Request, _ int) int {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
	return 0
}

// Bad returns how many requests failed verification, and the first's
// reason.
func (rc *Receiver) Bad() (n int64, first string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.refusals) > 0 {
		first = rc.refusals[0]
	}
	return int64(len(rc.refusals)), first
}

// Refusals returns the reason of every request that failed verification,
// in order.
func (rc *Receiver) Refusals() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.refusals...)
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

// InFlight is how many requests e is answering now.
func (e *Endpoint) InFlight() int64 { return e.inFlight.Load() }

func (rc *Receiver) refuse(msg string) {
	rc.mu.Lock()
	rc.refusals = append(rc.refusals, msg)
	rc.mu.Unlock()
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	e := rc.endpoints[r.URL.Path]
	rc.mu.Unlock()
	if e == nil {
		http.NotFound(w, r)
		return
	}
	e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	now := time.Now()
	id := r.Header.Get("webhook-id")
	e.mu.Lock()
	hook := e.hook
	e.mu.Unlock()
	if hook == nil {
		rc.refuse("a request to " + r.URL.Path + " before its subscription's secret was known")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := hook.Verify(body, r.Header); err != nil {
		rc.refuse(r.URL.Path + " webhook-id " + id + ": " + err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	e.mu.Lock()
	got := e.byEvent[id]
	if got == nil {
		got = &Got{}
		e.byEvent[id] = got
	}
	got.N++
	if got.Completed2xx > 0 {
		got.After2xx++
	}
	nth := got.N
	e.mu.Unlock()

	status := e.answer(w, r, nth)
	if status >= 200 && status < 300 && r.Context().Err() == nil {
		e.mu.Lock()
		got.Completed2xx++
		if got.First2xx.IsZero() {
			got.First2xx = now
		}
		e.mu.Unlock()
	}
}

// Got returns what e received for an event.
func (e *Endpoint) Got(eventID string) Got {
	e.mu.Lock()
	defer e.mu.Unlock()
	if g := e.byEvent[eventID]; g != nil {
		return *g
	}
	return Got{}
}

// Counts returns how many distinct events (webhook-ids) e answered 2xx,
// and how many further 2xx answers it gave those events (duplicates).
func (e *Endpoint) Counts() (distinct, dups int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.byEvent {
		if g.Completed2xx > 0 {
			distinct++
			dups += int64(g.Completed2xx - 1)
		}
	}
	return distinct, dups
}

// Receipts returns, for every event e answered 2xx, when the first
// request so answered arrived.
func (e *Endpoint) Receipts() map[string]time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]time.Time, len(e.byEvent))
	for id, g := range e.byEvent {
		if !g.First2xx.IsZero() {
			out[id] = g.First2xx
		}
	}
	return out
}
