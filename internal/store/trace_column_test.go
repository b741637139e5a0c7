package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// A stored trace context that is not a JSON object of strings (a row
// edited by hand) reads as none: the outboxes' claims still take every
// row, so one such row cannot stall an outbox. (It failed the whole claim,
// after its leases were taken, on every sweep.)
func TestMalformedTraceContextStallsNoOutbox(t *testing.T) {
	f := newWebhookFixture(t)
	db := f.st.DB()
	expires := time.Now().Add(time.Hour)
	var keys []models.APIKey
	for range 3 {
		k, err := f.st.APIKeys().Create(f.ctx, models.NewAPIKey{WorkspaceID: f.ws.WorkspaceID, UserID: f.ws.UserID,
			ExpiresAt: &expires, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	bad := []string{`{"traceparent": 1}`, `[]`, `"x"`}
	for i, k := range keys {
		if _, err := db.NewRaw(`UPDATE api_keys SET lifecycle_trace_context = ?::jsonb WHERE id = ?`, bad[i], k.ID).Exec(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := f.st.APIKeys().ClaimUnsynced(f.ctx, time.Minute, 10)
	if err != nil || len(claimed) != len(keys) {
		t.Fatalf("claimed %d keys of %d: %v", len(claimed), len(keys), err)
	}
	for _, l := range claimed {
		if l.Trace != nil {
			t.Errorf("key %s: trace %v, want none", l.ID, l.Trace)
		}
	}

	f.create(t, f.ws, true, models.EventTestCreated)
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewRaw(`UPDATE events SET trace_context = '{"traceparent": [1]}' WHERE id = ?`, ev.ID).Exec(f.ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := f.st.Events().ClaimUndispatched(f.ctx, 10, time.Minute, &store.ClaimTurns{})
	if err != nil || len(evs) != 1 || evs[0].Trace != nil {
		t.Fatalf("claimed %+v: %v; want the event, untraced", evs, err)
	}
}
