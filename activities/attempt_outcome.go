package activities

import (
	"net/http"
	"net/url"

	"github.com/openlayer-ai/workspace-service/models"
)

// AttemptOutcome is what an attempt came to, as the workflow sees it.
type AttemptOutcome string

// Attempt outcomes. Only Failed is worth another attempt.
const (
	AttemptDelivered AttemptOutcome = "delivered" // 2xx
	AttemptFailed    AttemptOutcome = "failed"    // any other status, or no response
	AttemptGone      AttemptOutcome = "gone"      // 410: the receiver wants no more
	AttemptSkipped   AttemptOutcome = "skipped"   // subscription disabled or deleted, event deleted: nothing sent, nothing recorded
	// AttemptThrottled: nothing was sent or recorded because the
	// subscription is at its rate limit, its concurrency limit, or paused by
	// a receiver's Retry-After; the workflow makes the same attempt number
	// again after RetryAfter.
	AttemptThrottled AttemptOutcome = "throttled"
)

// AttemptResult reports an attempt. StatusCode is 0 when no response came.
// Host is the receiver's host (and port, if the URL names one), as
// DisplayHost shows it, which the workflow shows in the summary of the subscription's next attempt; never
// the URL, whose path or query may carry a token. It is empty when the
// attempt was skipped.
type AttemptResult struct {
	Outcome    AttemptOutcome `json:"outcome"`
	StatusCode int            `json:"statusCode"`
	Host       string         `json:"host,omitempty"`
	// RetryAfter: for AttemptThrottled, how long to wait before making the
	// attempt again; for AttemptFailed, the receiver's Retry-After (a 429 or
	// 503 that sent one), which the workflow's next wait honours up to the
	// schedule's longest wait. Zero otherwise.
	RetryAfter Duration `json:"retryAfter,omitempty"`
}

// attemptLabel is what a POST came to in more detail than its outcome:
// the outcome label of webhook_delivery_attempts_total, and the log's.
type attemptLabel string

// Attempt labels; outcome maps each to its AttemptOutcome.
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

// outcome is the attempt outcome of a POST with this label.
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

// resultOf reads an attempt's outcome from its record, and names the host
// of the subscription's URL.
func resultOf(rec models.WebhookDelivery, targetURL string) *AttemptResult {
	res := &AttemptResult{Outcome: AttemptFailed, Host: hostOf(targetURL)}
	if rec.StatusCode != nil {
		res.StatusCode = *rec.StatusCode
	}
	switch {
	case rec.Success:
		res.Outcome = AttemptDelivered
	case res.StatusCode == http.StatusGone:
		res.Outcome = AttemptGone
	}
	return res
}

// hostOf is a URL's host (with its port, never its user info) as
// DisplayHost shows it, since the result lands in the history and the Web
// UI; empty when it does not parse.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return DisplayHost(u.Host)
}
