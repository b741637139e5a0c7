package api_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/openlayer-ai/workspace-service/api"
)

// The subscription cap bounds one event's fan-out: the create past it is a
// clear 409, even when many creates race for the last places.
func TestWebhookSubscriptionCap(t *testing.T) {
	const max = 5
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.WebhookMaxSubscriptions = max })
	body := map[string]any{"url": "https://example.com/hook", "eventTypes": []string{"test.created"}}
	h.createHook(body)

	var wg sync.WaitGroup
	codes := make([]int, 10)
	for i := range codes {
		wg.Go(func() { codes[i] = h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body).Code })
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("racing creates answered %v", codes)
		}
	}
	if created != max-1 {
		t.Fatalf("%d of the racing creates succeeded (%v), want %d", created, codes, max-1)
	}
	rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body)
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusConflict || e.Error.Code != "webhook_limit_reached" {
		t.Fatalf("create past the cap: %d %s", rec.Code, rec.Body)
	}
	// Deleting one frees its place.
	var list struct {
		Items []struct{ ID string } `json:"items"`
	}
	h.doJSON(http.MethodGet, h.hooksPath(), h.admin.Secret, nil, http.StatusOK, &list)
	h.doJSON(http.MethodDelete, h.hooksPath(list.Items[0].ID), h.admin.Secret, nil, http.StatusNoContent, nil)
	h.createHook(body)
}
