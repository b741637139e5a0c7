package activities

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// startAttemptSpan starts the client span of an attempt's POST, a child of
// the activity's span (the Temporal interceptor's). It records ids, the host
// as DisplayHost shows it and, at its end, the status and outcome: never the
// URL (its query may hold a token), a header, the signature or the payload.
func startAttemptSpan(ctx context.Context, in *AttemptInput, targetURL string) (context.Context, trace.Span) {
	return tracing.Tracer().Start(ctx, "webhook POST", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", http.MethodPost),
			attribute.String("server.address", hostOf(targetURL)),
			attribute.String("event.id", in.EventID.String()),
			attribute.String("subscription.id", in.SubscriptionID.String()),
			attribute.Int("attempt", in.AttemptNumber)))
}

func endAttemptSpan(span trace.Span, out sent) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("outcome", string(out.label)))
	if out.status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", out.status))
	}
	if out.label != labelSuccess {
		span.SetStatus(codes.Error, string(out.label))
	}
}

// injectTrace sets the W3C traceparent and tracestate of ctx's span on a
// request, so the receiver's tracing can join the trace; nothing when no
// span is there (tracing off). Baggage is not sent: it is ours, not the
// receiver's. Standard Webhooks signs id.timestamp.body only, so these
// headers are not signed.
func injectTrace(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}
