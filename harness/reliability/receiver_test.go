package reliability

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/receiver"
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

// endpoint is one subscription's URL on a receiver (harness/receiver,
// which verifies every request with the Standard Webhooks reference
// library and counts what arrived), answering as kind says.
type endpoint struct {
	*receiver.Endpoint
	path  string // for messages
	kind  behaviour
	delay time.Duration
}

// receipts is what an endpoint got for one event.
type receipts struct {
	n           int // requests that arrived with a valid signature
	completed2x int // 2xx answers written while the client still listened
	after2x     int // requests that arrived after a completed 2xx answer
}

// addEndpoint adds an endpoint to rc.
func addEndpoint(rc *receiver.Receiver, kind behaviour, delay time.Duration) *endpoint {
	e := &endpoint{kind: kind, delay: delay}
	e.Endpoint = rc.EndpointAnswering(e.answer)
	if u, err := url.Parse(e.URL()); err == nil {
		e.path = u.Path
	}
	return e
}

// got returns what e received for an event.
func (e *endpoint) got(eventID string) receipts {
	g := e.Got(eventID)
	return receipts{n: g.N, completed2x: g.Completed2xx, after2x: g.After2xx}
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
