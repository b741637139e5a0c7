package webhooks_test

import (
	"net/http"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
)

// A key created with an expiry and a signing-secret rotation reach their
// workflows through the lifecycle outbox, in another process and later;
// the relay's signal is a child of the request that made the change (the
// trace context stored with it), and the workflow's activity runs in that
// trace (the workflow's own span ends with it, days later).
func TestLifecycleChangesJoinTheirRequestsTrace(t *testing.T) {
	col := traceToCollector(t)
	env := testenv.Start(t)
	rc := newReceiver(t, http.StatusOK)
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/in", "eventTypes": []string{"test.created"}})
	expiringKey(t, env)
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.ID.String()+"/secret/rotate"), env.AdminKey,
		map[string]any{"gracePeriodHours": 1}, http.StatusOK, nil)

	for _, c := range []struct{ request, signal, activity string }{
		{"POST /v1/workspaces/{workspaceId}/api-keys", "outbox signal api key workflow", "RunActivity:ApplyAPIKeyTransitions"},
		{"POST /v1/workspaces/{workspaceId}/webhooks/{webhookId}/secret/rotate", "outbox signal webhook secret workflow", "RunActivity:ClearPreviousWebhookSecret"},
	} {
		req := col.await(t, 15*time.Second, func(s *tracepb.Span) bool { return s.Name == c.request })
		signal := col.await(t, 30*time.Second, func(s *tracepb.Span) bool {
			return s.Name == c.signal && string(s.TraceId) == string(req.TraceId)
		})
		if string(signal.ParentSpanId) != string(req.SpanId) {
			t.Errorf("%s: the relay's span's parent %x, want the request's span %x", c.signal, signal.ParentSpanId, req.SpanId)
		}
		col.await(t, 15*time.Second, func(s *tracepb.Span) bool {
			return s.Name == c.activity && string(s.TraceId) == string(req.TraceId)
		})
	}
	if t.Failed() {
		for _, s := range col.spans() {
			t.Logf("span %x %x<-%x %s", s.TraceId, s.SpanId, s.ParentSpanId, s.Name)
		}
	}
}
