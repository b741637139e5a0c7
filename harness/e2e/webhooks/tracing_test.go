package webhooks_test

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/openlayer-ai/workspace-service/app"
	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
)

// One event, one trace: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an
// OTLP gRPC collector in this test, the publish request's server span, the
// outbox relay's start, the delivery workflow, its attempt activity and the
// attempt's POST are one trace, the HTTPS receiver gets the POST span's
// traceparent, the attempt's log line names the trace, a redelivery is
// its request's trace with a link to the publish span, and no span
// attribute holds the signing secret, the API key or the payload.
func TestWebhookTraceFromPublishToReceiver(t *testing.T) {
	col := traceToCollector(t)
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/in", "eventTypes": []string{"test.created"}})
	const marker = "payload-marker-5e1f"
	acc := publish(t, env, "test.created", map[string]any{"marker": marker})
	awaitDelivery(t, env, acc.ID, 30*time.Second, nil)
	got := rc.wait(t, 1, 10*time.Second)[0]

	publishSpan := col.await(t, 15*time.Second, func(s *tracepb.Span) bool {
		return s.Name == "POST /v1/workspaces/{workspaceId}/events"
	})
	if attr(publishSpan, "request.id") == "" || attr(publishSpan, "http.route") != "/v1/workspaces/{workspaceId}/events" ||
		attr(publishSpan, "event.id") != acc.ID.String() {
		t.Errorf("publish span attributes %v", publishSpan.Attributes)
	}
	traceID := publishSpan.TraceId
	post := col.await(t, 15*time.Second, func(s *tracepb.Span) bool {
		return s.Name == "webhook POST" && attr(s, "event.id") == acc.ID.String()
	})
	if string(post.TraceId) != string(traceID) {
		t.Fatalf("the attempt's POST is in trace %x, the publish in %x", post.TraceId, traceID)
	}
	want := "00-" + hex.EncodeToString(traceID) + "-" + hex.EncodeToString(post.SpanId) + "-01"
	if tp := got.header.Get("traceparent"); tp != want {
		t.Errorf("receiver's traceparent %q, want %q", tp, want)
	}

	// Every step between, in the same trace; the relay's start a child of the publish.
	start := col.await(t, 5*time.Second, func(s *tracepb.Span) bool {
		return s.Name == "outbox start delivery" && string(s.TraceId) == string(traceID)
	})
	if string(start.ParentSpanId) != string(publishSpan.SpanId) {
		t.Errorf("the relay's span's parent %x, want the publish span %x", start.ParentSpanId, publishSpan.SpanId)
	}
	for _, name := range []string{"StartWorkflow:DeliveryWorkflow", "RunWorkflow:DeliveryWorkflow", "RunActivity:AttemptDelivery"} {
		col.await(t, 5*time.Second, func(s *tracepb.Span) bool { return s.Name == name && string(s.TraceId) == string(traceID) })
	}
	// From the POST up its parents to the publish, every link exported.
	byID := map[string]*tracepb.Span{}
	for _, s := range col.spans() {
		byID[string(s.SpanId)] = s
	}
	var path []string
	for s := post; s != nil && string(s.SpanId) != string(publishSpan.SpanId); s = byID[string(s.ParentSpanId)] {
		path = append(path, s.Name)
		if len(s.ParentSpanId) == 0 || byID[string(s.ParentSpanId)] == nil {
			t.Errorf("the chain from the POST up stops at %q: %v", s.Name, path)
			break
		}
	}
	t.Logf("from the attempt up to the publish: %s", strings.Join(path, " <- "))

	// A redelivery is its request's trace, linked to the publish's.
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries/"+acc.ID.String()+"/redeliver"),
		env.AdminKey, nil, http.StatusAccepted, nil)
	again := rc.wait(t, 2, 30*time.Second)[1]
	redeliver := col.await(t, 15*time.Second, func(s *tracepb.Span) bool { return s.Name == "redeliver" })
	if len(redeliver.Links) != 1 || string(redeliver.Links[0].TraceId) != string(traceID) || string(redeliver.Links[0].SpanId) != string(publishSpan.SpanId) {
		t.Errorf("the redeliver span's links %v, want the publish span %x", redeliver.Links, publishSpan.SpanId)
	}
	post2 := col.await(t, 15*time.Second, func(s *tracepb.Span) bool {
		return s.Name == "webhook POST" && attr(s, "event.id") == acc.ID.String() && string(s.SpanId) != string(post.SpanId)
	})
	want2 := "00-" + hex.EncodeToString(redeliver.TraceId) + "-" + hex.EncodeToString(post2.SpanId) + "-01"
	if tp := again.header.Get("traceparent"); string(post2.TraceId) != string(redeliver.TraceId) || tp != want2 {
		t.Errorf("the redelivery's POST in trace %x, traceparent %q; want the redeliver request's trace, %q", post2.TraceId, tp, want2)
	}

	if logs := env.Logs(); !strings.Contains(logs, "trace_id="+hex.EncodeToString(traceID)) {
		t.Errorf("no log line carries trace_id=%x", traceID)
	}
	forbidden := []string{hook.Secret, strings.TrimPrefix(hook.Secret, "whsec_"), env.AdminKey, marker,
		strings.TrimPrefix(got.header.Get("webhook-signature"), "v1,")}
	for _, s := range col.spans() {
		for _, kv := range s.Attributes {
			v := kv.Value.String()
			for _, bad := range forbidden {
				if strings.Contains(v, bad) {
					t.Errorf("span %q attribute %s holds a secret, the signature or the payload", s.Name, kv.Key)
				}
			}
		}
	}
	if t.Failed() || testing.Verbose() {
		for _, s := range col.spans() {
			t.Logf("span %x %x<-%x %s", s.TraceId, s.SpanId, s.ParentSpanId, s.Name)
		}
	}
}

// traceToCollector turns this process's tracing on, exporting to an OTLP
// collector in the test, until the test ends.
func traceToCollector(t *testing.T) *collector {
	t.Helper()
	col := startCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+col.addr)
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_SERVICE_NAME", "workspace-e2e")
	stop, err := app.Tracing(context.Background(), "workspace-e2e", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); tracing.Use(noop.NewTracerProvider()) })
	return col
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyText(kv.Value)
		}
	}
	return ""
}

func anyText(v *commonpb.AnyValue) string {
	if sv, ok := v.GetValue().(*commonpb.AnyValue_StringValue); ok {
		return sv.StringValue
	}
	return v.String()
}

// collector is an OTLP/gRPC trace endpoint that keeps every span it gets.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	addr   string
	mu     sync.Mutex
	got    []*tracepb.Span
	notify chan struct{}
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{addr: ln.Addr().String(), notify: make(chan struct{}, 1)}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return c
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.got = append(c.got, ss.Spans...)
		}
	}
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (c *collector) spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.got...)
}

// await returns the first span match accepts, waiting up to within.
func (c *collector) await(t *testing.T, within time.Duration, match func(*tracepb.Span) bool) *tracepb.Span {
	t.Helper()
	deadline := time.After(within)
	for {
		for _, s := range c.spans() {
			if match(s) {
				return s
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			for _, s := range c.spans() {
				t.Logf("span %x %x<-%x %s", s.TraceId, s.SpanId, s.ParentSpanId, s.Name)
			}
			t.Fatalf("no such span after %v", within)
			return nil
		}
	}
}
