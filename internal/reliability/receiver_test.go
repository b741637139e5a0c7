package reliability

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// behaviour is how an endpoint answers.
type behaviour int

const (
	answerOK        behaviour = iota // 200 at once
	answerSlow                       // 200 after endpoint.delay
	answerFailFirst                  // 500 to an event's first request, then 200
	answerFailAll                    // 500 always
	answerHugeBody                   // 500 with a 50 MB body
	answerStall                      // nothing for endpoint.delay, then 200
	answerRedirect                   // 302 to itself
	answerReset                      // the connection reset before any answer
)

// hugeBody is the size of answerHugeBody's answer.
const hugeBody = 50 << 20

// endpoint is one subscription's URL on a receiver.
type endpoint struct {
	path  string
	kind  behaviour
	delay time.Duration

	mu       sync.Mutex
	hook     *standardwebhooks.Webhook
	byEvent  map[string]*receipts // by webhook-id
	inFlight atomic.Int64
}

// receipts is what an endpoint got for one event.
type receipts struct {
	n           int // requests that arrived with a valid signature
	completed2x int // 2xx answers written while the client still listened
	after2x     int // requests that arrived after a completed 2xx answer
}

// receiver is an HTTPS server in the test process holding many endpoints.
// It verifies every request with the Standard Webhooks reference library;
// a request it cannot verify is kept in badSignatures, and fails the run.
type receiver struct {
	srv *httptest.Server

	mu            sync.Mutex
	endpoints     map[string]*endpoint
	badSignatures []string
	next          int
}

func newReceiver(tlsCert *tls.Certificate) *receiver {
	rc := &receiver{endpoints: map[string]*endpoint{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	// Refused handshakes (the untrusted receiver's whole point) are expected.
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsCert != nil {
		rc.srv.TLS = &tls.Config{Certificates: []tls.Certificate{*tlsCert}}
	}
	rc.srv.StartTLS()
	return rc
}

func (rc *receiver) close() { rc.srv.Close() }

// endpoint adds an endpoint and returns it; its URL is rc.url(e).
func (rc *receiver) endpoint(kind behaviour, delay time.Duration) *endpoint {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.next++
	e := &endpoint{path: "/e/" + strconv.Itoa(rc.next), kind: kind, delay: delay, byEvent: map[string]*receipts{}}
	rc.endpoints[e.path] = e
	return e
}

func (rc *receiver) url(e *endpoint) string { return rc.srv.URL + e.path }

// trust sets the secret e verifies with (the one its subscription got).
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

// got returns a copy of what e received for an event.
func (e *endpoint) got(eventID string) receipts {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.byEvent[eventID]; r != nil {
		return *r
	}
	return receipts{}
}

func (rc *receiver) bad() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.badSignatures...)
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
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
	id := r.Header.Get("webhook-id")
	e.mu.Lock()
	hook := e.hook
	e.mu.Unlock()
	if hook == nil {
		rc.fail("request to " + e.path + " before its subscription's secret is known")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := hook.Verify(body, r.Header); err != nil {
		rc.fail(e.path + " webhook-id " + id + ": " + err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	e.mu.Lock()
	rec := e.byEvent[id]
	if rec == nil {
		rec = &receipts{}
		e.byEvent[id] = rec
	}
	rec.n++
	if rec.completed2x > 0 {
		rec.after2x++
	}
	nth := rec.n
	e.mu.Unlock()

	status := e.answer(w, r, nth)
	if status >= 200 && status < 300 && r.Context().Err() == nil {
		e.mu.Lock()
		rec.completed2x++
		e.mu.Unlock()
	}
}

// answer writes e's answer to its nth request for an event and returns the
// status written (0 when none was).
func (e *endpoint) answer(w http.ResponseWriter, r *http.Request, nth int) int {
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	switch e.kind {
	case answerSlow, answerStall:
		if !wait(e.delay) {
			return 0
		}
	case answerFailFirst:
		if nth == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return http.StatusInternalServerError
		}
	case answerFailAll:
		w.WriteHeader(http.StatusInternalServerError)
		return http.StatusInternalServerError
	case answerHugeBody:
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for sent := 0; sent < hugeBody; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				break // the client stopped reading, as it should
			}
		}
		return http.StatusInternalServerError
	case answerRedirect:
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
		return http.StatusFound
	case answerReset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := underlyingTCP(conn); ok {
					_ = tc.SetLinger(0) // close sends RST
				}
				conn.Close()
				return 0
			}
		}
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(http.StatusOK)
	return http.StatusOK
}

// underlyingTCP finds the TCP connection under a hijacked TLS connection.
func underlyingTCP(c net.Conn) (*net.TCPConn, bool) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tcp, ok := c.(*net.TCPConn)
	return tcp, ok
}

func (rc *receiver) fail(msg string) {
	rc.mu.Lock()
	rc.badSignatures = append(rc.badSignatures, msg)
	rc.mu.Unlock()
}
