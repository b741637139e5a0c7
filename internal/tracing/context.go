package tracing

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Carrier is a span context as W3C headers (traceparent, tracestate),
// stored with an event so that work done later, in another
// process, joins the trace of the request that published it.
type Carrier map[string]string

// FromContext is ctx's span context as a Carrier, nil when tracing is off
// or ctx holds no span: nothing to store then. An unsampled context is
// kept, so the work it leads to is not sampled either.
func FromContext(ctx context.Context) Carrier {
	if !on.Load() || !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := Carrier{}
	Propagator.Inject(ctx, propagation.MapCarrier(c))
	// A caller's baggage is theirs to pass on, not the service's to keep:
	// only the span context is stored with each event and change.
	delete(c, "baggage")
	return c
}

// Context is ctx with c's span context as its remote parent.
func (c Carrier) Context(ctx context.Context) context.Context {
	if len(c) == 0 {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.MapCarrier(c))
}

// JSON is c as a jsonb value, nil (SQL NULL) when empty.
func (c Carrier) JSON() *string {
	if len(c) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]string(c))
	s := string(b)
	return &s
}
