package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"go.opentelemetry.io/otel/trace"

	"github.com/openlayer-ai/workspace-service/internal/secret"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	routeKey
	principalKey
	requestTxKey
	inviteScopeKey
)

// routeInfo is filled by the router once it has matched, so the outer
// middleware can label metrics and logs with the route template.
type routeInfo struct{ template string }

func requestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// validRequestID bounds what a client may choose as its request id, since
// it is echoed into headers and logs.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// looksLikeSecret spots a credential sent as a request id (by mistake or to
// plant it): echoed into logs it would be a leaked secret.
func looksLikeSecret(id string) bool {
	return strings.HasPrefix(id, secret.APIKeyPrefix) || strings.HasPrefix(id, "whsec_") ||
		strings.HasPrefix(id, secret.PortalTokenPrefix) || strings.HasPrefix(id, secret.PortalCookiePrefix)
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// observe is the outermost middleware: it assigns the request id, caps the
// body, recovers panics into a generic 500, and records one log line and
// the metrics for every request.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) || looksLikeSecret(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		route := &routeInfo{template: "unmatched"}
		ctx, span := startServerSpan(r, id)
		defer span.End()
		ctx = context.WithValue(ctx, requestIDKey, id)
		ctx = context.WithValue(ctx, routeKey, route)
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		rec := &statusRecorder{ResponseWriter: w}

		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.ErrorContext(ctx, "panic serving request",
					slog.String("requestId", id), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.writeError(rec, r, errPanic)
				}
			}
			elapsed := time.Since(start)
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			s.metrics.observe(r.Method, route.template, status, elapsed)
			endServerSpan(span, r.Method, route.template, status)
			s.log.LogAttrs(ctx, slog.LevelInfo, "request",
				slog.String("requestId", id),
				slog.String("method", r.Method),
				slog.String("route", route.template),
				slog.Int("status", status),
				slog.Int("bytes", rec.bytes),
				slog.Duration("duration", elapsed),
			)
		}()
		next.ServeHTTP(rec, r)
	})
}

// errPanic is an error no domain code matches, so it becomes a generic 500.
var errPanic = panicError{}

type panicError struct{}

func (panicError) Error() string { return "handler panicked" }

// matchedRoute records the matched route's template for observe.
func matchedRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := r.Context().Value(routeKey).(*routeInfo); ok {
			if route := mux.CurrentRoute(r); route != nil {
				if tpl, err := route.GetPathTemplate(); err == nil {
					info.template = tpl
					trace.SpanFromContext(r.Context()).SetName(r.Method + " " + tpl)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
