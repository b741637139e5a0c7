// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// variables, and carries trace contexts where no request does: in an event's
// row from its publish to the outbox relay, and in log lines.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of the service's own spans.
const Name = "github.com/openlayer-ai/workspace-service"

// Tracer is the service's tracer, from the provider Setup (or Use) set:
// a no-op one until then, or when tracing is off. It is held here rather
// than looked up in otel's global on each span, which takes a lock.
func Tracer() trace.Tracer { return *tracer.Load() }

var (
	tracer atomic.Pointer[trace.Tracer]
	// on: a provider other than the no-op one is in use (FromContext).
	on atomic.Bool
)

func init() {
	t := noop.NewTracerProvider().Tracer(Name)
	tracer.Store(&t)
}

// Use makes tp the process's tracer provider, the global one included (the
// Temporal interceptor reads it); tests use it with a recording provider.
func Use(tp trace.TracerProvider) {
	t := tp.Tracer(Name)
	tracer.Store(&t)
	_, isNoop := tp.(noop.TracerProvider)
	on.Store(!isNoop)
	otel.SetTracerProvider(tp)
}

// Propagator is W3C trace context and baggage, set globally by Setup. It is
// set even with tracing off: propagating an empty context costs nothing and
// keeps a caller's traceparent flowing through.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint, or OTEL_TRACES_EXPORTER=otlp, and neither OTEL_SDK_DISABLED=true
// nor OTEL_TRACES_EXPORTER=none.
func Enabled(lookup func(string) (string, bool)) bool {
	if v, _ := lookup("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return false
	}
	switch v, _ := lookup("OTEL_TRACES_EXPORTER"); strings.TrimSpace(v) {
	case "none":
		return false
	case "otlp":
		return true
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, _ := lookup(k); strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// Setup installs the global tracer provider and propagator of a process
// named service (OTEL_SERVICE_NAME overrides it), and returns its shutdown,
// which flushes the spans still batched. With tracing off (Enabled) the
// provider stays OpenTelemetry's no-op one: no exporter, no batching, and
// starting a span allocates nothing. The exporter, sampler and batching
// read their own OTEL_* variables (OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER,
// OTEL_BSP_*); OTEL_EXPORTER_OTLP_PROTOCOL chooses grpc (the default here)
// or http/protobuf.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(Propagator)
	if !Enabled(os.LookupEnv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := exporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// The sampler is the SDK's: OTEL_TRACES_SAMPLER, by default
	// parentbased_always_on, so an event's trace is whole or absent.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return tp.Shutdown, nil
}

func exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch protocol {
	case "", "grpc":
		return otlptracegrpc.New(ctx)
	case "http/protobuf":
		return otlptracehttp.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want grpc or http/protobuf", protocol)
}
