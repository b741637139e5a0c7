package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}, false},
	} {
		lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		if got := tracing.Enabled(lookup); got != tc.want {
			t.Errorf("Enabled(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

// Off, nothing is stored with an event, even under a caller's traceparent;
// on, the span's context is, and it is the parent of what follows it.
func TestCarrier(t *testing.T) {
	remote := tracing.Carrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"baggage": "user=someone%40example.com"}.Context(context.Background())
	if c := tracing.FromContext(remote); c != nil {
		t.Fatalf("tracing off: stored %v", c)
	}
	tracing.Use(sdktrace.NewTracerProvider())
	t.Cleanup(func() { tracing.Use(noop.NewTracerProvider()) })
	ctx, span := tracing.Tracer().Start(remote, "publish")
	defer span.End()
	c := tracing.FromContext(ctx)
	if !strings.HasPrefix(c["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-"+span.SpanContext().SpanID().String()) || c.JSON() == nil {
		t.Fatalf("stored %v for span %v", c, span.SpanContext())
	}
	if _, kept := c["baggage"]; kept {
		t.Errorf("stored the caller's baggage: %v", c)
	}
	_, child := tracing.Tracer().Start(c.Context(context.Background()), "relay")
	if child.SpanContext().TraceID() != span.SpanContext().TraceID() {
		t.Fatalf("the relay's span is in another trace")
	}
	if tracing.Carrier(nil).JSON() != nil {
		t.Fatal("an empty carrier is not NULL")
	}
}

func TestLogHandlerAddsTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(tracing.LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v")
	log.InfoContext(context.Background(), "outside")
	ctx := tracing.Carrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}.Context(context.Background())
	log.InfoContext(ctx, "inside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if strings.Contains(lines[0], "trace_id") {
		t.Errorf("outside a span: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"trace_id":"0af7651916cd43dd8448eb211c80319c"`) || !strings.Contains(lines[1], `"span_id":"b7ad6b7169203331"`) {
		t.Errorf("inside a span: %s", lines[1])
	}
}
