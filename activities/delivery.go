package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// AttemptInput is one attempt to deliver an event to one subscription.
type AttemptInput struct {
	EventID        uuid.UUID `json:"eventId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
	AttemptNumber  int       `json:"attemptNumber"`
	// Final says no scheduled attempt follows this one if it fails: its
	// failure exhausts the schedule (the metrics count it, and the
	// subscription's other webhooks hear of it: webhook.delivery.exhausted).
	Final bool `json:"final"`
	// NextAttemptIn is the wait before the next scheduled attempt should
	// this one fail (zero when Final or Manual): it dates the delivery
	// state's nextAttemptAt.
	NextAttemptIn Duration `json:"nextAttemptIn,omitempty"`
	// MaxWait is the schedule's longest wait: the bound on how far a
	// receiver's Retry-After may push this subscription's next attempt.
	MaxWait Duration `json:"maxWait,omitempty"`
	// Manual marks an attempt asked for by a redelivery or recovery, beyond
	// or ahead of the schedule: its failure exhausts nothing, and a
	// scheduled attempt may still follow (NextAttemptIn).
	Manual bool `json:"manual,omitempty"`
	// Throttled counts how many times in a row this attempt was held back
	// by its subscription's limits: while its attempts in flight are what
	// holds it, each refusal doubles the wait before it asks again (see
	// inFlightBackoff).
	Throttled int `json:"throttled,omitempty"`
}

// ErrUndecryptableSecret is the failure type of a signing secret that no
// key of the worker's WEBHOOK_SECRET_KEY ring opens. It is retryable: a
// replica configured with another ring (mid-rotation, or misconfigured)
// must not drop the delivery, and the retry may land on a replica that
// holds the key, or on this one once its configuration is fixed.
const ErrUndecryptableSecret = "UndecryptableSecret"

// ErrLocalAttemptLate is the failure type of a local first attempt that
// waited so long for a slot of the worker's that less than a whole
// request's time is left before its deadline: it gives up before sending,
// and the workflow makes the attempt as the regular activity, whose
// deadline starts when it starts. Sending anyway could see the request cut
// after the receiver got it, and sent again.
const ErrLocalAttemptLate = "LocalAttemptLate"

// localAttemptMargin is what an attempt needs beyond its request: its two
// database round trips.
const localAttemptMargin = 5 * time.Second

// localAttemptLate returns ErrLocalAttemptLate's error when ctx is a local
// activity's with less than a request and its margin left.
func localAttemptLate(ctx context.Context) error {
	if !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	if !info.IsLocalActivity || info.Deadline.IsZero() {
		return nil
	}
	if left := time.Until(info.Deadline); left < MaxAttemptDuration+localAttemptMargin {
		return temporal.NewApplicationError(
			fmt.Sprintf("local attempt started with %v before its deadline, less than a request needs", left.Round(time.Millisecond)),
			ErrLocalAttemptLate)
	}
	return nil
}

// AttemptDelivery makes one delivery attempt and writes its record.
//
// HTTP failures are results, not errors: the workflow owns the retry
// schedule, and Temporal never retries an attempt because the receiver
// failed. Errors are left for infrastructure trouble (database down, worker
// gone mid-attempt), which Temporal retries; a retry first looks for the
// record of this attempt number and, when the earlier run wrote it, returns
// what it recorded without sending again. So every attempt number has
// exactly one record and the numbers have no gaps.
//
// The workflow makes attempt 1 as a local activity and, when that returns
// an error, makes it again as a regular activity with the same number; a
// worker lost during the local attempt has its workflow task retried, which
// runs the local attempt again. Each re-run is one of the cases above: the
// record is there (returned as is), or it is not (the attempt is made
// again, a duplicate receipt with the same webhook-id), or two runs race
// and the insert's ON CONFLICT keeps the first record, which both return.
func (a *Activities) AttemptDelivery(ctx context.Context, in *AttemptInput) (*AttemptResult, error) {
	if late := localAttemptLate(ctx); late != nil {
		return nil, late
	}
	// One round trip reads the record of this attempt number (if an earlier
	// run wrote it), the subscription and the event, from one snapshot, and
	// when the attempt would send, acquires its send limits (throttle.go).
	deliveries := a.Store.Deliveries()
	lease := a.sendLease(in)
	st, err := deliveries.AttemptStateAcquire(ctx, in.SubscriptionID, in.EventID, in.AttemptNumber, lease)
	if errors.Is(err, models.ErrNotFound) {
		// Deleted as the limits were acquired: nothing to send to.
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if err != nil {
		return nil, err
	}
	if st.Existing != nil {
		return resultOf(*st.Existing, st.Target.URL), nil
	}
	if !st.TargetFound || !st.Target.Enabled || !st.EventFound {
		if st.TargetFound && st.EventFound {
			// Disabled: the delivery ends here, and its state says so.
			if err := deliveries.MarkSkipped(ctx, in.SubscriptionID, in.EventID, a.now()); err != nil {
				return nil, err
			}
		}
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if res := a.throttled(ctx, in, st.Grant); res != nil {
		return res, nil
	}
	// The record's statement gives the lease back (RecordOptions.Lease);
	// on every other way out, this does.
	held := true
	defer func() {
		if held {
			a.release(ctx, in, lease)
		}
	}()
	target, ev := st.Target, st.Event
	keys, err := a.signingKeys(ctx, target, in.EventID)
	if err != nil {
		return nil, err
	}
	body, err := deliveryBody(ev)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("cannot encode the event", "UnencodableEvent", err)
	}

	start := a.now()
	out := a.send(ctx, target.URL, ev.ID.String(), keys, body, start)
	elapsed := a.now().Sub(start)
	out.retryAfter = boundRetryAfter(in, out.retryAfter)

	rec := models.WebhookDelivery{
		SubscriptionID: in.SubscriptionID,
		EventID:        in.EventID,
		AttemptNumber:  in.AttemptNumber,
		Success:        out.label.outcome() == AttemptDelivered,
		ResponseBody:   cleanText(string(out.body)),
		ResponseTimeMs: int(elapsed.Milliseconds()),
		DateCreated:    start,
	}
	if out.status != 0 {
		rec.StatusCode = &out.status
	}
	if !rec.Success {
		msg := cleanText(out.errText)
		rec.ErrorMessage = &msg
	}
	opts := a.recordOptions(in, ev, out.label, out.retryAfter)
	opts.Lease, opts.Pause = &lease.Key, out.retryAfter
	recorded, err := deliveries.RecordAttempt(ctx, rec, opts)
	held = held && err != nil
	stored, wrote := recorded.Delivery, recorded.Wrote
	if errors.Is(err, models.ErrNotFound) {
		// Deleted while the request was in flight: nothing left to record on.
		return &AttemptResult{Outcome: AttemptSkipped}, nil
	}
	if err != nil {
		return nil, err
	}
	if !wrote {
		// A concurrent run of this attempt recorded first; its record stands.
		return resultOf(stored, target.URL), nil
	}

	a.Metrics.attempt(string(out.label), elapsed)
	res := resultOf(stored, target.URL)
	if res.Outcome == AttemptFailed {
		res.RetryAfter = Duration(out.retryAfter)
	}
	switch {
	case res.Outcome == AttemptDelivered:
		a.Metrics.delivered(a.now().Sub(ev.DateCreated))
	case res.Outcome == AttemptFailed && exhausts(in):
		a.Metrics.deliveryExhausted()
	case res.Outcome == AttemptFailed && retryFollows(in):
		a.Metrics.retryScheduled()
	}
	a.log().LogAttrs(ctx, slog.LevelInfo, "webhook attempt",
		slog.String("eventId", in.EventID.String()),
		slog.String("subscriptionId", in.SubscriptionID.String()),
		slog.Int("attempt", in.AttemptNumber),
		slog.String("outcome", string(out.label)),
		slog.Int("status", out.status),
		slog.Duration("duration", elapsed))
	a.emitted(ctx, in, recorded)
	return res, nil
}

// signingKeys opens the subscription's sealed secrets: the current one
// and, during a rotation's grace period (the store hands it over only
// until it expires), the previous one, so a receiver still verifying with
// the old secret loses nothing. Every failure is retryable and comes
// before anything is sent or recorded, so the attempt keeps its number
// until a worker can make it: a missing key waits for the configuration; a
// secret no key of the ring opens (or that opens to something malformed)
// waits for a replica with the right ring, and is logged and counted so an
// operator hears of it. A previous secret that cannot be used holds the
// attempt back too, rather than send without the signature its receiver
// may still rely on, but at most until its grace period ends.
func (a *Activities) signingKeys(ctx context.Context, t models.WebhookTarget, eventID uuid.UUID) ([][]byte, error) {
	if a.WebhookSecrets == nil {
		return nil, secret.ErrNoKey
	}
	key, err := a.signingKey(ctx, t, t.SecretCiphertext, "signing secret", eventID)
	if err != nil || t.PreviousSecretCiphertext == nil {
		return [][]byte{key}, err
	}
	previous, err := a.signingKey(ctx, t, t.PreviousSecretCiphertext, "previous signing secret", eventID)
	return [][]byte{key, previous}, err
}

// signingKey opens one sealed secret of t (which names it in messages).
func (a *Activities) signingKey(ctx context.Context, t models.WebhookTarget, sealed []byte, which string, eventID uuid.UUID) ([]byte, error) {
	plain, err := a.WebhookSecrets.Open(sealed, t.ID[:])
	problem := "no key of WEBHOOK_SECRET_KEY opens it"
	if err == nil {
		key, err := secret.WebhookSigningKey(string(plain))
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
	return nil, temporal.NewApplicationError("cannot use the subscription's "+which+": "+problem+
		" (does this worker's WEBHOOK_SECRET_KEY hold the key the API sealed it with?)", ErrUndecryptableSecret)
}

// deliveryBody is what receivers get: {"type","timestamp","data"}, the
// Standard Webhooks payload shape. The event id travels in the webhook-id
// header (and so in the signed content). The same event always encodes to
// the same bytes, so every retry sends an identical body.
func deliveryBody(ev models.Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Type      models.EventType `json:"type"`
		Timestamp time.Time        `json:"timestamp"`
		Data      json.RawMessage  `json:"data"`
	}{ev.Type, ev.DateCreated.UTC(), ev.Data})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// sent is what came of one POST.
type sent struct {
	label   attemptLabel
	status  int
	body    []byte
	errText string
	// retryAfter is the receiver's Retry-After on a 429 or 503 (zero
	// otherwise): it may put the delivery's next attempt later.
	retryAfter time.Duration
}

// send POSTs one signed request and classifies what happens.
func (a *Activities) send(ctx context.Context, url, id string, keys [][]byte, body []byte, at time.Time) sent {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return sent{label: labelConnectionError, errText: "invalid request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	// One signature per secret: the current one and, during a rotation's
	// grace period, the previous one (Standard Webhooks allows several).
	req.Header.Set("webhook-signature", secret.SignWebhookWith(keys, id, at, body))

	resp, err := a.client().Do(req)
	if err != nil {
		label, text := classify(err)
		if label == labelBlocked {
			// The host and the address it resolved to, for the operator;
			// never the URL, whose path or query may carry a token.
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
	// A body cut short (the receiver hung up after its headers) keeps what
	// arrived; the status decides the outcome.
	got, _ := io.ReadAll(io.LimitReader(resp.Body, models.DeliveryResponseBodyMax))
	// Drain a little more so the connection can be reused; never much.
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

func (a *Activities) client() *http.Client {
	if a.WebhookClient != nil {
		return a.WebhookClient
	}
	return defaultWebhookClient
}

// defaultWebhookClient keeps the address check on when no client is given.
var defaultWebhookClient = NewWebhookClient(false)

func (a *Activities) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.New(slog.DiscardHandler)
}
