package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/apiclient"
)

// call sends a request through c, bounded to 10 s, failing the test
// unless the status is want, and decodes the answer into out (when not
// nil).
func call(t *testing.T, c *apiclient.Client, method, path string, body any, want int, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Expect(ctx, method, path, body, want, out); err != nil {
		t.Fatal(err)
	}
}
