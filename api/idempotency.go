package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
)

// Idempotency-Key: a client retrying a POST (the SDKs retry 5xx and
// timeouts) sends the same key, and the work is done once. A key is scoped
// to the API key that sent it and kept for store.IdempotencyTTL.
const (
	idempotencyHeader = "Idempotency-Key"
	replayedHeader    = "Idempotent-Replayed"
	maxIdempotencyKey = 255

	codeIdempotencyInProgress = "idempotency_request_in_progress"
)

// replayedHeaders are the response headers stored and replayed with the
// body. X-Request-Id is not among them: a replay is a request of its own.
var replayedHeaders = []string{"Content-Type", "Location", "Cache-Control", "X-Should-Retry"}

// idempotent wraps a POST handler with Idempotency-Key handling. It goes
// inside the route's authorization (admin, current secret), so a replay is
// authorized like the request it replays.
func (s *Server) idempotent(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values(idempotencyHeader)
		if len(values) == 0 {
			next(w, r)
			return
		}
		if len(values) != 1 || !validIdempotencyKey(values[0]) {
			s.writeIdempotencyError(w, r, http.StatusBadRequest, "invalid_idempotency_key",
				"send one Idempotency-Key header of 1 to 255 printable ASCII characters")
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// Too large or unreadable: the handler answers as it would
			// without the header (413 or 400), and nothing is claimed.
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			next(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		hash := sha256.Sum256(body)
		req := store.IdempotencyRequest{
			APIKeyID: principal(r).KeyID, Key: values[0],
			Method: r.Method, Path: r.URL.EscapedPath(), BodyHash: hash[:],
		}
		claimed, rec, err := s.store.IdempotencyKeys().Claim(r.Context(), req, s.now())
		switch {
		case err != nil:
			s.writeError(w, r, err)
		case claimed:
			s.runClaimed(w, r, next, req, rec.CreatedAt)
		case rec.Method != req.Method || rec.Path != req.Path || !bytes.Equal(rec.BodyHash, req.BodyHash):
			s.writeIdempotencyError(w, r, http.StatusUnprocessableEntity, "idempotency_key_mismatch",
				"this Idempotency-Key was used for a different request (method, path or body) in the last 24 hours; use a new key for a new request")
		case rec.Response == nil:
			w.Header().Set("Retry-After", "1")
			s.writeIdempotencyError(w, r, http.StatusConflict, codeIdempotencyInProgress,
				"a request with this Idempotency-Key is still being processed; retry after the Retry-After delay")
		default:
			s.replay(w, r, req, rec.Response)
		}
	}
}

// validIdempotencyKey admits 1 to 255 printable ASCII characters, not
// starting or ending with a space (which proxies may trim).
func validIdempotencyKey(k string) bool {
	if k == "" || len(k) > maxIdempotencyKey || k != strings.TrimSpace(k) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// runClaimed runs the handler under the claim made at claimedAt, then
// stores its response, or releases the claim when a retry may succeed
// (5xx, 408, 429, a panic) so that the retry runs the work again.
func (s *Server) runClaimed(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, req store.IdempotencyRequest, claimedAt time.Time) {
	rec := &responseCopy{statusRecorder: statusRecorder{ResponseWriter: w}}
	finished := false
	defer func() {
		// On a panic, release the key only if nothing or a 5xx was
		// answered: a success already sent means the work was done.
		if !finished && (rec.status == 0 || rec.status >= 500) {
			s.releaseClaim(r, req, claimedAt)
		}
	}()
	next(rec, r)
	finished = true
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 500 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests {
		s.releaseClaim(r, req, claimedAt)
		return
	}
	resp := store.IdempotentResponse{Status: status, Headers: map[string]string{}, Body: rec.body.Bytes()}
	for _, name := range replayedHeaders {
		if v := w.Header().Get(name); v != "" {
			resp.Headers[name] = v
		}
	}
	// writeSecret marks every response that holds a secret no-store.
	if strings.Contains(w.Header().Get("Cache-Control"), "no-store") {
		if s.secrets == nil {
			resp.Body, resp.Withheld = nil, true
		} else if sealed, err := s.secrets.Seal(resp.Body, idempotencyAD(req, principal(r).SecretHash)); err == nil {
			resp.Body, resp.Sealed = sealed, true
		} else {
			resp.Body, resp.Withheld = nil, true
		}
	}
	// The response is already sent, so releasing the key would let a retry
	// redo the work: storing is retried instead, and if it keeps failing the
	// claim stays in progress (409 to retries) until its lease lapses.
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		if err = s.store.IdempotencyKeys().Complete(detached(r), req.APIKeyID, req.Key, claimedAt, resp); err == nil {
			return
		}
	}
	s.log.WarnContext(r.Context(), "idempotency: response not stored; the key stays claimed until its lease lapses",
		slog.String("requestId", requestIDFrom(r.Context())), slog.Any("error", err))
}

// releaseClaim deletes the claim; if that fails, the claim's lease frees
// the key after a few minutes.
func (s *Server) releaseClaim(r *http.Request, req store.IdempotencyRequest, claimedAt time.Time) {
	if err := s.store.IdempotencyKeys().Release(detached(r), req.APIKeyID, req.Key, claimedAt); err != nil {
		s.log.WarnContext(r.Context(), "idempotency: claim not released; it frees itself when its lease ends",
			slog.String("requestId", requestIDFrom(r.Context())), slog.Any("error", err))
	}
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request, req store.IdempotencyRequest, resp *store.IdempotentResponse) {
	body := resp.Body
	if resp.Sealed {
		var err error
		if s.secrets == nil {
			resp.Withheld = true
		} else if body, err = s.secrets.Open(resp.Body, idempotencyAD(req, principal(r).SecretHash)); err != nil {
			resp.Withheld = true
		}
	}
	if resp.Withheld {
		s.writeIdempotencyError(w, r, http.StatusConflict, "idempotency_key_reused",
			"this Idempotency-Key was already used for this request, and its response held a secret that cannot be replayed; use a new key to make a new request")
		return
	}
	for name, v := range resp.Headers {
		w.Header().Set(name, v)
	}
	w.Header().Set(replayedHeader, "true")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(body)
}

// idempotencyAD binds a sealed response to its row, its request and the
// secret presented: a key's previous secret (perhaps the leaked one) shares
// the key's id, and must not be handed a secret the current one obtained.
func idempotencyAD(req store.IdempotencyRequest, presented []byte) []byte {
	ad := []byte("idempotency-response\x00" + req.APIKeyID.String() + "\x00" + req.Key + "\x00" +
		req.Method + "\x00" + req.Path + "\x00")
	ad = append(ad, req.BodyHash...)
	return append(append(ad, 0), presented...)
}

// responseCopy passes a response through, recording its status, and keeps
// a copy of its body to store (never to log).
type responseCopy struct {
	statusRecorder
	body bytes.Buffer
}

func (c *responseCopy) Write(b []byte) (int, error) {
	c.body.Write(b)
	return c.statusRecorder.Write(b)
}

// errReader returns err, after the part of the body already read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (s *Server) writeIdempotencyError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	writeErrorBody(w, status, errorPayload{Code: code, Message: message, RequestID: requestIDFrom(r.Context())})
}

// detached is for the writes that must happen whether or not the client
// is still there: a claim left in progress would block its key.
func detached(r *http.Request) context.Context { return context.WithoutCancel(r.Context()) }
