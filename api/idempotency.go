package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"

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

// idempotent wraps a POST handler whose work is PostgreSQL's only with
// Idempotency-Key handling: the key's claim, the work and the response
// commit in one transaction (idempotency_tx.go). It goes inside the route's
// authorization (admin, current secret), so a replay is authorized like the
// request it replays.
func (s *Server) idempotent(next http.HandlerFunc) http.HandlerFunc {
	return s.withIdempotencyKey(next, s.runInTx)
}

// idempotentLeased is idempotent for a handler that calls Temporal, which
// no transaction covers: its claim commits first and holds the key for a
// short lease (idempotency_leased.go).
func (s *Server) idempotentLeased(next http.HandlerFunc) http.HandlerFunc {
	return s.withIdempotencyKey(next, s.runLeased)
}

type claimedRun func(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, req store.IdempotencyRequest)

// withIdempotencyKey checks the header and reads the body: a request
// without the header is served as is; one with it is run.
func (s *Server) withIdempotencyKey(next http.HandlerFunc, run claimedRun) http.HandlerFunc {
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
		canonical, raw := bodyHashes(body)
		run(w, r, next, store.IdempotencyRequest{
			APIKeyID: idempotencyScope(r), Key: values[0],
			Method: r.Method, Path: r.URL.EscapedPath(), BodyHash: canonical, RawBodyHash: raw,
		})
	}
}

// idempotencyScope is whom an Idempotency-Key belongs to: the calling API
// key, or on the one route that takes none (accepting an invite) the
// invite, whose token the body hash binds.
func idempotencyScope(r *http.Request) uuid.UUID {
	if id, ok := r.Context().Value(inviteScopeKey).(uuid.UUID); ok {
		return id
	}
	return principal(r).KeyID
}

// answerExisting answers a request whose key another request holds or held:
// rec is that request's row.
func (s *Server) answerExisting(w http.ResponseWriter, r *http.Request, req store.IdempotencyRequest, rec store.IdempotencyRecord) {
	if len(req.RawBodyHash) > 0 && bytes.Equal(rec.BodyHash, req.RawBodyHash) {
		req.BodyHash = req.RawBodyHash // a row stored before canonical hashing, sealed with its hash
	}
	switch {
	case rec.Method != req.Method || rec.Path != req.Path || !bytes.Equal(rec.BodyHash, req.BodyHash):
		s.writeIdempotencyError(w, r, http.StatusUnprocessableEntity, "idempotency_key_mismatch",
			"this Idempotency-Key was used for a different request (method, path or body) in the last 24 hours; use a new key for a new request")
	case rec.Response == nil:
		s.writeInProgress(w, r)
	default:
		s.replay(w, r, req, rec.Response)
	}
}

func (s *Server) writeInProgress(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", "1")
	s.writeIdempotencyError(w, r, http.StatusConflict, codeIdempotencyInProgress,
		"a request with this Idempotency-Key is still being processed; retry after the Retry-After delay")
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

// storable reports whether a response is stored for replay. A retry of a
// 5xx, 408 or 429 may succeed, so those are not: their work is undone or
// their claim released, and the retry runs anew.
func storable(status int) bool {
	return status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// storedResponse is what is stored of buf to replay: its status, the
// replayed headers and its body, sealed when it holds a secret.
func (s *Server) storedResponse(r *http.Request, req store.IdempotencyRequest, buf *bufferedResponse) store.IdempotentResponse {
	resp := store.IdempotentResponse{Status: buf.code(), Headers: map[string]string{}, Body: buf.body.Bytes()}
	for _, name := range replayedHeaders {
		if v := buf.header.Get(name); v != "" {
			resp.Headers[name] = v
		}
	}
	// writeSecret marks every response that holds a secret no-store.
	if strings.Contains(buf.header.Get("Cache-Control"), "no-store") {
		if s.secrets == nil {
			resp.Body, resp.Withheld = nil, true
		} else if sealed, err := s.secrets.Seal(resp.Body, idempotencyAD(req, principal(r).SecretHash)); err == nil {
			resp.Body, resp.Sealed = sealed, true
		} else {
			resp.Body, resp.Withheld = nil, true
		}
	}
	return resp
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

// errReader returns err, after the part of the body already read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (s *Server) writeIdempotencyError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	writeErrorBody(w, status, errorPayload{Code: code, Message: message, RequestID: requestIDFrom(r.Context())})
}
