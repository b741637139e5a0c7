package portal_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// The success rate counts events, each once: one redelivered until it
// succeeded is a success, and the attempts are told beside it.
func TestPortalSuccessRateCountsEvents(t *testing.T) {
	h := newHarness(t)
	b := h.opened(nil)
	var created models.WebhookCreated
	h.api(http.MethodPost, "/v1/workspaces/"+h.admin.WorkspaceID.String()+"/webhooks",
		map[string]any{"url": "https://example.com/x", "eventTypes": []string{"test.created"}}, http.StatusCreated, &created)
	now := time.Now().UTC()
	// Three events: the first failed twice, then succeeded; the second
	// failed once; the third succeeded. Two events of three, five attempts.
	for _, outcomes := range [][]bool{{false, false, true}, {false}, {true}} {
		ev, err := h.store.Events().CreateTest(context.Background(), h.admin.WorkspaceID, created.ID, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range outcomes {
			code := 500
			if ok {
				code = 200
			}
			d := models.WebhookDelivery{ID: uuid.New(), SubscriptionID: created.ID, EventID: ev.ID, AttemptNumber: i + 1,
				Success: ok, StatusCode: &code, DateCreated: now.Add(time.Duration(i-10) * time.Minute)}
			if _, _, err := h.store.Deliveries().Record(context.Background(), d); err != nil {
				t.Fatal(err)
			}
		}
	}
	const want = "66.7% of 3 events succeeded (5 attempts)"
	for _, page := range []string{"/portal/", "/portal/endpoints/" + created.ID.String()} {
		if body := b.do(http.MethodGet, page, nil).Body.String(); !strings.Contains(body, want) {
			t.Errorf("%s: no %q in %s", page, want, body)
		}
	}
}
