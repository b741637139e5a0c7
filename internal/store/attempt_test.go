package store_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// AttemptState reads in one statement what Find, Target and Events.Get read
// in three, and says what is missing instead of failing.
func TestDeliveriesAttemptState(t *testing.T) {
	f := newWebhookFixture(t)
	w := f.create(t, f.ws, true, models.EventTestCreated)
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: models.EventTestCreated, Data: json.RawMessage(`{"n": 1, "s": "x"}`)})
	if err != nil {
		t.Fatal(err)
	}

	// Nothing recorded yet: the target and the whole event, data included.
	st, err := f.st.Deliveries().AttemptState(f.ctx, w.ID, ev.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st.Existing != nil || !st.TargetFound || !st.EventFound {
		t.Fatalf("state %+v", st)
	}
	if st.Target.ID != w.ID || st.Target.WorkspaceID != f.ws.WorkspaceID || st.Target.URL != w.URL || !st.Target.Enabled || !bytes.Equal(st.Target.SecretCiphertext, f.sealed) {
		t.Fatalf("target %+v", st.Target)
	}
	if st.Event.ID != ev.ID || st.Event.WorkspaceID != ev.WorkspaceID || st.Event.Type != ev.Type || !st.Event.DateCreated.Equal(ev.DateCreated) {
		t.Fatalf("event %+v, want %+v", st.Event, ev)
	}
	var data map[string]any
	if err := json.Unmarshal(st.Event.Data, &data); err != nil || data["n"] != 1.0 || data["s"] != "x" {
		t.Fatalf("event data %s: %v", st.Event.Data, err)
	}

	// Attempt 1 recorded: it comes back whole, and attempt 2 sees none.
	rec, _, err := f.st.Deliveries().Record(f.ctx, models.WebhookDelivery{
		SubscriptionID: w.ID, EventID: ev.ID, AttemptNumber: 1, StatusCode: new(503),
		ResponseBody: "busy", ResponseTimeMs: 7, ErrorMessage: new("HTTP 503"),
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err = f.st.Deliveries().AttemptState(f.ctx, w.ID, ev.ID, 1)
	if err != nil || st.Existing == nil {
		t.Fatalf("state %+v, %v", st, err)
	}
	got := *st.Existing
	if got.ID != rec.ID || got.AttemptNumber != 1 || got.Success || *got.StatusCode != 503 || got.ResponseBody != "busy" ||
		got.ResponseTimeMs != 7 || *got.ErrorMessage != "HTTP 503" || !got.DateCreated.Equal(rec.DateCreated) ||
		got.SubscriptionID != w.ID || got.EventID != ev.ID {
		t.Fatalf("existing %+v, want %+v", got, rec)
	}
	if st.Event.Data != nil {
		t.Fatalf("the event's data was read for an attempt already recorded: %s", st.Event.Data)
	}
	if st, err = f.st.Deliveries().AttemptState(f.ctx, w.ID, ev.ID, 2); err != nil || st.Existing != nil || st.Event.Data == nil {
		t.Fatalf("attempt 2: %+v, %v", st, err)
	}

	// Disabled: found, not enabled, and no data read.
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, w.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	if st, err = f.st.Deliveries().AttemptState(f.ctx, w.ID, ev.ID, 2); err != nil || !st.TargetFound || st.Target.Enabled || st.Event.Data != nil {
		t.Fatalf("disabled: %+v, %v", st, err)
	}

	// Neither subscription nor event exists: one row saying so, no error.
	st, err = f.st.Deliveries().AttemptState(f.ctx, uuid.New(), uuid.New(), 1)
	if err != nil || st.Existing != nil || st.TargetFound || st.EventFound {
		t.Fatalf("missing: %+v, %v", st, err)
	}
}
