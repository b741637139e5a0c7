package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

// BenchmarkRequestSpan is a request's tracing cost, off (the no-op
// provider) and on at 100% sampling with no exporter: the server span and
// the trace context stored with a published event.
// Run: go test -run '^$' -bench RequestSpan ./api
func BenchmarkRequestSpan(b *testing.B) {
	plain := httptest.NewRequest("POST", "/v1/workspaces/x/events", nil)
	traced := httptest.NewRequest("POST", "/v1/workspaces/x/events", nil)
	traced.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	for _, c := range []struct {
		name string
		tp   func() (use func())
	}{
		{"off", func() func() { tracing.Use(noop.NewTracerProvider()); return func() {} }},
		{"on", func() func() {
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
			tracing.Use(tp)
			return func() { tracing.Use(noop.NewTracerProvider()) }
		}},
	} {
		for _, r := range []struct {
			name string
			req  *http.Request
		}{{"plain", plain}, {"traceparent", traced}} {
			b.Run(c.name+"/"+r.name, func(b *testing.B) {
				defer c.tp()()
				b.ReportAllocs()
				for b.Loop() {
					ctx, span := startServerSpan(r.req, "req-1")
					var in models.NewEvent
					in.Trace = tracing.FromContext(ctx)
					endServerSpan(span, "POST", "/v1/workspaces/{workspaceId}/events", 202)
					span.End()
				}
			})
		}
	}
}
