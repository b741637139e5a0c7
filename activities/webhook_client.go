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
	// attemptTimeout bounds a whole attempt, so a trickling receiver cannot hold it.
	attemptTimeout = 2*connectTimeout + responseTimeout
)

// MaxAttemptDuration bounds an attempt's request. SHUTDOWN_TIMEOUT should be
// longer, so a stopping worker finishes its attempts rather than resend them.
const MaxAttemptDuration = attemptTimeout

// UserAgent names the service to receivers.
const UserAgent = "openlayer-workspace-service-webhooks/1.0"

// NewWebhookClient is the HTTP client of delivery attempts. Unless
// allowPrivate, it refuses internal addresses (netguard). It follows no
// redirects, so a receiver cannot bounce a signed request elsewhere.
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
		// Every recipient's first attempt runs at once; reuse spares handshakes.
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
