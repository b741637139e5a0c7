package activities

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// signingKeys opens the subscription's current secret and, during a
// rotation's grace period, the previous one, so a receiver still verifying
// with the old secret loses nothing. A v1a subscription's sealed secret is
// its whsk_ private key, and signs v1a. Every failure comes before anything is
// sent and is retryable: the attempt waits for a worker with the right key.
func (a *Activities) signingKeys(ctx context.Context, t models.WebhookTarget, eventID uuid.UUID) ([]secret.WebhookKey, error) {
	if a.WebhookSecrets == nil {
		return nil, secret.ErrNoKey
	}
	key, err := a.signingKey(ctx, t, t.SecretCiphertext, "signing secret", eventID)
	if err != nil || t.PreviousSecretCiphertext == nil {
		return []secret.WebhookKey{key}, err
	}
	previous, err := a.signingKey(ctx, t, t.PreviousSecretCiphertext, "previous signing secret", eventID)
	return []secret.WebhookKey{key, previous}, err
}

func (a *Activities) signingKey(ctx context.Context, t models.WebhookTarget, sealed []byte, which string, eventID uuid.UUID) (secret.WebhookKey, error) {
	plain, err := a.WebhookSecrets.Open(sealed, t.ID[:])
	problem := "no key of WEBHOOK_SECRET_KEY opens it"
	if err == nil {
		key, err := secret.ParseWebhookKey(string(plain))
		if err == nil {
			return key, nil
		}
		problem = "it decrypts to a malformed secret"
	}
	a.Metrics.undecryptableSecret()
	// Neither the ciphertext nor any key is logged: ids are enough to act on.
	a.log().LogAttrs(ctx, slog.LevelError, "webhook "+which+" cannot be used; the attempt will be retried, possibly on another worker",
		slog.String("subscriptionId", t.ID.String()),
		slog.String("eventId", eventID.String()),
		slog.String("problem", problem),
		slog.Int("keys", a.WebhookSecrets.Keys()))
	return secret.WebhookKey{}, temporal.NewApplicationError("cannot use the subscription's "+which+": "+problem+
		" (does this worker's WEBHOOK_SECRET_KEY hold the key the API sealed it with?)", ErrUndecryptableSecret)
}

// deliveryBody is the Standard Webhooks payload, the same bytes on every retry.
func deliveryBody(ev models.Event) ([]byte, error) {
	return models.DeliveryBody(ev.Type, ev.DateCreated, ev.Data)
}

// sent is what came of one POST.
type sent struct {
	label   attemptLabel
	status  int
	body    []byte
	errText string
	// retryAfter is a 429's or 503's Retry-After.
	retryAfter time.Duration
}

func (s sent) record(in *AttemptInput, start time.Time, elapsed time.Duration) models.WebhookDelivery {
	rec := models.WebhookDelivery{
		SubscriptionID: in.SubscriptionID,
		EventID:        in.EventID,
		AttemptNumber:  in.AttemptNumber,
		Success:        s.label.outcome() == AttemptDelivered,
		ResponseBody:   cleanText(string(s.body)),
		ResponseTimeMs: int(elapsed.Milliseconds()),
		DateCreated:    start,
	}
	if s.status != 0 {
		rec.StatusCode = &s.status
	}
	if !rec.Success {
		msg := cleanText(s.errText)
		rec.ErrorMessage = &msg
	}
	return rec
}

// send POSTs one signed request, with the subscription's custom headers,
// and classifies what happens.
func (a *Activities) send(ctx context.Context, url, id string, keys []secret.WebhookKey, body []byte, at time.Time, custom http.Header) sent {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return sent{label: labelConnectionError, errText: "invalid request: " + err.Error()}
	}
	// Validation refuses every name set below; custom goes first regardless,
	// so the service's own headers would win.
	for name, values := range custom {
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	// One signature per key, v1 or v1a (Standard Webhooks allows several).
	req.Header.Set("webhook-signature", secret.SignWebhookWith(keys, id, at, body))
	injectTrace(ctx, req.Header)

	resp, err := a.client().Do(req)
	if err != nil {
		label, text := classify(err)
		if label == labelBlocked {
			// Host and address for the operator; never the URL (it may hold a token).
			var blocked *netguard.BlockedError
			if errors.As(err, &blocked) {
				err = blocked
			}
			a.log().WarnContext(ctx, "webhook attempt blocked", slog.String("eventId", id),
				slog.String("host", req.URL.Host), slog.Any("error", err))
		}
		return sent{label: label, errText: text}
	}
	defer resp.Body.Close()
	// A body cut short keeps what arrived; the status decides the outcome.
	got, _ := io.ReadAll(io.LimitReader(resp.Body, models.DeliveryResponseBodyMax))
	// Drain a little, so the connection can be reused.
	_, _ = io.CopyN(io.Discard, resp.Body, 16<<10)
	s := sent{status: resp.StatusCode, body: got}
	if honoursRetryAfter(resp.StatusCode) {
		s.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), a.now())
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		s.label = labelSuccess
	case resp.StatusCode == http.StatusGone:
		s.label, s.errText = labelGone, "HTTP 410 Gone: the receiver asked for no more deliveries"
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		s.label = labelRedirect
		s.errText = fmt.Sprintf("HTTP %d: redirects are not followed", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			s.errText += " (Location: " + truncate(loc, 256) + ")"
		}
	default:
		s.label, s.errText = labelHTTPError, fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return s
}

// attemptLabel is the outcome label of webhook_delivery_attempts_total and logs.
type attemptLabel string

const (
	labelSuccess         attemptLabel = "success"
	labelHTTPError       attemptLabel = "http_error"
	labelGone            attemptLabel = "gone"
	labelRedirect        attemptLabel = "redirect"
	labelTimeout         attemptLabel = "timeout"
	labelConnectionError attemptLabel = "connection_error"
	labelTLSError        attemptLabel = "tls_error"
	labelBlocked         attemptLabel = "blocked"
	labelDNSError        attemptLabel = "dns_error"
)

func (l attemptLabel) outcome() AttemptOutcome {
	switch l {
	case labelSuccess:
		return AttemptDelivered
	case labelGone:
		return AttemptGone
	default:
		return AttemptFailed
	}
}

// classify labels a failed request and words its record's text, leaving out
// the URL url.Error adds: a URL may carry a token in its query.
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
		// The same words as blocked, or a tenant could probe internal names.
		return labelDNSError, unreachableHost
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return labelTimeout, "no response in time (connect 5s, response 10s): " + err.Error()
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &recErr):
		return labelTLSError, "TLS: " + err.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// A bare "EOF" tells a customer nothing.
		return labelConnectionError, "the receiver closed the connection before sending a response: " + err.Error()
	case errors.Is(err, syscall.ECONNREFUSED):
		return labelConnectionError, "the receiver refused the connection: " + err.Error()
	default:
		return labelConnectionError, err.Error()
	}
}

// unreachableHost is the one message for a host not allowed or not resolved.
const unreachableHost = "the destination host is not allowed or could not be resolved: webhooks may only reach public internet addresses"

// cleanText makes receiver bytes valid PostgreSQL text: UTF-8, no NUL bytes.
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

// parseRetryAfter reads seconds or an HTTP date (RFC 9110 10.2.3). Anything
// malformed or past is no wait: a bad header must not hold deliveries back.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return maxRetryAfterHeader
			}
			return 0
		}
		return time.Duration(min(secs, uint64(maxRetryAfterHeader/time.Second))) * time.Second
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	return min(max(at.Sub(now), 0), maxRetryAfterHeader)
}

// honoursRetryAfter: only a 429's or 503's Retry-After asks to slow down.
func honoursRetryAfter(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

func (a *Activities) client() *http.Client {
	if a.WebhookClient != nil {
		return a.WebhookClient
	}
	return defaultWebhookClient
}

// defaultWebhookClient keeps the address check on when no client is given.
var defaultWebhookClient = NewWebhookClient(false)
