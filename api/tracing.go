package api

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// startServerSpan starts a request's server span, continuing the caller's
// traceparent if it sent one. Its name is the method until the router
// matches (matchedRoute names it by the route template, never the path,
// whose ids would make every span name unique). Only the method, route,
// status and request id are recorded: no path, query, header or body.
func startServerSpan(r *http.Request, requestID string) (context.Context, trace.Span) {
	ctx := tracing.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := tracing.Tracer().Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer))
	if span.IsRecording() { // off, building attributes is all the cost
		span.SetAttributes(attribute.String("http.request.method", r.Method), attribute.String("request.id", requestID))
	}
	return ctx, span
}

func endServerSpan(span trace.Span, method, route string, status int) {
	if !span.IsRecording() {
		return
	}
	if route == "unmatched" {
		span.SetName(method)
	}
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// tagEvent records the id of the event a request published on its server
// span, so a trace viewer finds the whole trace by the tag event.id, as it
// finds the relay's and the attempts' spans.
func tagEvent(ctx context.Context, id string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("event.id", id))
	}
}
