package stack_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
)

// call sends a request through a, failing the test unless the status is
// want, and decodes the answer into out (when not nil).
func call(ctx context.Context, t *testing.T, a *apiclient.Client, method, path string, body any, want int, out any) {
	t.Helper()
	if err := a.Expect(ctx, method, path, body, want, out); err != nil {
		t.Fatal(err)
	}
}

// publish sends one test.created event through a and returns its id.
func publish(ctx context.Context, t *testing.T, a *apiclient.Client, seq int) string {
	t.Helper()
	var ev struct{ ID string }
	call(ctx, t, a, http.MethodPost, a.WSPath("/events"),
		map[string]any{"type": "test.created", "data": map[string]any{"seq": seq, "via": a.Name}}, http.StatusAccepted, &ev)
	return ev.ID
}

// page is the envelope of every list.
type page[T any] struct {
	Meta struct {
		TotalItems int `json:"totalItems"`
	} `json:"_meta"`
	Items []T `json:"items"`
}
