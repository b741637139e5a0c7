package activities_test

import (
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// An attempt's POST is a client span of the caller's trace, its traceparent
// is what the receiver gets, and no span attribute carries the signing
// secret, the signature, the payload or the URL's query (it may hold a token).
func TestAttemptSpanCarriesNoSecret(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { tracing.Use(noop.NewTracerProvider()) })

	f := newFixture(t, true)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusOK) })
	sub, whsec := f.Subscribe(t, rc.URL+"/hook?token=query-token-4711")
	ev := f.Publish(t, `{"marker":"payload-marker-0815"}`)

	ctx, parent := tracing.Tracer().Start(f.Ctx, "activity")
	res, err := f.Acts.AttemptDelivery(ctx, &activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1})
	parent.End()
	if err != nil || res.Outcome != activities.AttemptDelivered {
		t.Fatalf("attempt: %+v, %v", res, err)
	}
	got := rc.Requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	signature := got[0].Header.Get("webhook-signature")

	var post sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "webhook POST" {
			post = s
		}
	}
	if post == nil {
		t.Fatalf("no webhook POST span among %d", len(rec.Ended()))
	}
	if post.Parent().SpanID() != parent.SpanContext().SpanID() || post.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("POST span's parent %v, want the activity's %v", post.Parent(), parent.SpanContext())
	}
	want := "00-" + post.SpanContext().TraceID().String() + "-" + post.SpanContext().SpanID().String() + "-01"
	if tp := got[0].Header.Get("traceparent"); tp != want {
		t.Errorf("receiver's traceparent %q, want the POST span's %q", tp, want)
	}

	forbidden := []string{whsec, strings.TrimPrefix(whsec, "whsec_"), signature, strings.TrimPrefix(signature, "v1,"),
		"payload-marker-0815", "query-token-4711", rc.URL}
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			v := kv.Value.String()
			for _, bad := range forbidden {
				if bad != "" && strings.Contains(v, bad) {
					t.Errorf("span %q attribute %s = %q holds %q", s.Name(), kv.Key, v, bad)
				}
			}
		}
	}
}
