package activities

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
)

// unreachableHost is the one message for a destination that may not or
// cannot be reached by name.
const unreachableHost = "the destination host is not allowed or could not be resolved: webhooks may only reach public internet addresses"

// This file holds the words of delivery records: what a failed request is
// called (its label) and what the record says about it, and how receiver
// bytes are made storable.

// classify turns a failed request into its label and the text kept in the
// delivery record. The URL is left out of the text (url.Error adds
// it): the record names the subscription already, and a URL may carry a
// token in its query.
func classify(err error) (label attemptLabel, text string) {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var (
		blocked  *netguard.BlockedError
		netErr   net.Error
		certErr  *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		recErr   tls.RecordHeaderError
		dnsErr   *net.DNSError
	)
	switch {
	case errors.As(err, &blocked):
		// The workspace reads this text: naming the address a host resolved
		// to would let a tenant map internal DNS. The worker logs it instead.
		return labelBlocked, unreachableHost
	case errors.As(err, &dnsErr):
		// The same words as a blocked address: "no such host" beside "not
		// allowed" would tell a tenant which internal names exist, and the
		// resolver's own text names the resolver's address.
		return labelDNSError, unreachableHost
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return labelTimeout, "no response in time (connect 5s, response 10s): " + err.Error()
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &recErr):
		return labelTLSError, "TLS: " + err.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// A bare "EOF" tells a customer nothing: say who hung up, and when.
		return labelConnectionError, "the receiver closed the connection before sending a response: " + err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return labelConnectionError, "the receiver refused the connection: " + err.Error()
	default:
		return labelConnectionError, err.Error()
	}
}

// cleanText makes receiver-controlled bytes storable as PostgreSQL text:
// valid UTF-8 (a cut at 1 KiB may split a character) and no NUL bytes.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
