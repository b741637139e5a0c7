package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/openlayer-ai/workspace-service/models"
)

// errorBody is the one JSON shape of every error response.
type errorBody struct {
	Error errorPayload `json:"error"`
}

type errorPayload struct {
	Code      string              `json:"code"`
	Message   string              `json:"message"`
	Details   []models.FieldError `json:"details,omitempty"`
	RequestID string              `json:"requestId,omitempty"`
}

// writeJSON writes v with the given status. It encodes before writing the
// status, so a value that cannot be encoded becomes a 500 in the error shape
// rather than a success with an empty body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal_error","message":"the response could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeSecret writes a response that holds a secret shown only once: no
// cache between the server and the client may keep a copy.
func writeSecret(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, v)
}

// writeError answers with err in the error shape. Anything that is not a
// models error is logged and answered with a generic 500, so internals never
// reach the caller.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := models.HTTPStatus(err)
	payload := errorPayload{RequestID: requestIDFrom(r.Context())}
	var me *models.Error
	switch {
	case errors.As(err, &me):
		payload.Code, payload.Message, payload.Details = me.Code, me.Message, me.Details
	case status == http.StatusInternalServerError:
		s.log.ErrorContext(r.Context(), "request failed", slog.String("requestId", payload.RequestID), slog.Any("error", err))
		payload.Code, payload.Message = "internal_error", "an internal error occurred; quote the request id when reporting it"
	case status == http.StatusServiceUnavailable:
		// The driver's text names internal hosts and ports: log it, and
		// tell the caller only what to do.
		s.log.WarnContext(r.Context(), "request failed: a dependency is unavailable", slog.String("requestId", payload.RequestID), slog.Any("error", err))
		payload.Code, payload.Message = "unavailable", "the service cannot reach its database right now; retry after the Retry-After delay"
	default:
		// A bare sentinel such as models.ErrNotFound.
		payload.Code, payload.Message = codeOf(status), err.Error()
	}
	writeErrorBody(w, status, payload)
}

// writeErrorBody writes every error response, with the headers its status calls for.
func writeErrorBody(w http.ResponseWriter, status int, payload errorPayload) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		// The dependency may well be back shortly, unless a handler set a better delay.
		w.Header().Set("Retry-After", "5")
	}
	if retryCannotFix(status) && !retryMayFix(payload.Code) {
		// The official SDKs honour this header; without it they retry a 409
		// twice before the caller sees it.
		w.Header().Set("X-Should-Retry", "false")
	}
	writeJSON(w, status, errorBody{Error: payload})
}

// retryCannotFix reports the statuses whose error the same request would
// meet again. 408, 429 and 5xx are absent: retrying those may succeed.
func retryCannotFix(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden,
		http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusConflict,
		http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// retryMayFix reports the codes a retry may fix though their status says
// otherwise: a 409 for an Idempotency-Key still in progress.
func retryMayFix(code string) bool { return code == codeIdempotencyInProgress }

func codeOf(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request"
	case http.StatusUnauthorized:
		return "unauthenticated"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "body_too_large"
	case http.StatusUnsupportedMediaType:
		return "unsupported_media_type"
	case http.StatusServiceUnavailable:
		return "unavailable"
	default:
		return "internal_error"
	}
}

// writeStatus answers with a status fixed by HTTP itself (404, 405, 413,
// 415) rather than by the domain.
func (s *Server) writeStatus(w http.ResponseWriter, r *http.Request, status int, message string) {
	writeErrorBody(w, status, errorPayload{
		Code: codeOf(status), Message: message, RequestID: requestIDFrom(r.Context()),
	})
}
