package api_test

import (
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

// The publish's server span carries the event's id, so a trace viewer
// finds the event's trace by the tag event.id from the publish on (as it
// finds the relay's and the attempts' spans); and nothing of the request
// beyond ids, the route and the status: not the key, not the payload.
func TestPublishSpanCarriesEventID(t *testing.T) {
	h := newHarness(t)
	rec := tracetest.NewSpanRecorder()
	tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { tracing.Use(noop.NewTracerProvider()) })

	const marker = "payload-marker-7c21"
	var acc models.EventAccepted
	h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret,
		map[string]any{"type": "test.created", "data": map[string]any{"marker": marker}}, http.StatusAccepted, &acc)

	var publish sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "POST /v1/workspaces/{workspaceId}/events" {
			publish = s
		}
	}
	if publish == nil {
		t.Fatalf("no publish span among %d ended spans", len(rec.Ended()))
	}
	got := map[string]string{}
	for _, kv := range publish.Attributes() {
		got[string(kv.Key)] = kv.Value.String()
	}
	if got["event.id"] != acc.ID.String() {
		t.Errorf("the publish span's event.id is %q, want the accepted event's %s (attributes %v)", got["event.id"], acc.ID, got)
	}
	for k, v := range got {
		for _, bad := range []string{h.admin.Secret, marker} {
			if strings.Contains(v, bad) {
				t.Errorf("attribute %s holds the API key or the payload", k)
			}
		}
	}
}
