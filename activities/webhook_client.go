package activities

import (
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
)

// Limits of one delivery attempt.
const (
	connectTimeout  = 5 * time.Second  // TCP connect, and separately the TLS handshake
	responseTimeout = 10 * time.Second // from the request sent to the response headers
	// attemptTimeout bounds a whole attempt, body included, so a receiver
	// trickling its answer cannot hold an attempt open.
	attemptTimeout = 2*connectTimeout + responseTimeout
)

// MaxAttemptDuration is the longest one delivery attempt's request takes;
// a worker's SHUTDOWN_TIMEOUT should be longer, so that a stopping worker
// lets its attempts finish instead of leaving them to be sent again.
const MaxAttemptDuration = attemptTimeout

// UserAgent names the service to receivers.
const UserAgent = "openlayer-workspace-service-webhooks/1.0"

// NewWebhookClient is the HTTP client of delivery attempts. Unless
// allowPrivate, its dialer refuses internal addresses after resolution (see
// netguard). It follows no redirects: a 3xx is answered to the attempt as
// is and counts as a failure, so a receiver cannot bounce a signed request
// somewhere else. TLS verification uses the system pool (RootCAs nil), which
// honours SSL_CERT_FILE and SSL_CERT_DIR.
func NewWebhookClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = netguard.Control
	}
	transport := &http.Transport{
		// No proxy from the environment: the dialer would then check the
		// proxy's address instead of the receiver's.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: responseTimeout,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		// Every recipient's first attempt runs at once (local activities of
		// the event's first workflow task), so a receiver host behind many
		// subscriptions or busy events sees far more than 16 concurrent
		// attempts; with 16 idle connections kept per host the rest were
		// closed after each request and the next attempts paid a new TCP
		// and TLS handshake (about 10% of the CPU of the delivery
		// benchmark; 128 made ten subscriptions 9-17% faster).
		// MaxIdleConns still bounds the total.
		MaxIdleConnsPerHost:    128,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
