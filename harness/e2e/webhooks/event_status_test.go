package webhooks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
)

// eventDetail reads GET .../events/{id}, recipients keyed by subscription.
func eventDetail(t *testing.T, env *testenv.Env, id uuid.UUID) (models.EventDetail, map[uuid.UUID]models.EventRecipient) {
	t.Helper()
	var ev models.EventDetail
	env.DoJSON(t, http.MethodGet, wsPath(env, "/events/"+id.String()), env.AdminKey, nil, http.StatusOK, &ev)
	by := map[uuid.UUID]models.EventRecipient{}
	for _, r := range ev.Recipients {
		by[r.SubscriptionID] = r
	}
	return ev, by
}

// An event to two real receivers, one that accepts and one that always
// fails, with one retry 2 s after the first attempt: GET .../events/{id}
// shows the first succeeded after one attempt, and the second pending
// (one attempt, 500, the retry's time) and then failed after both; the
// deliveries filters agree; the event is another workspace's 404 and a
// member's 403.
func TestEventDeliveryStatus(t *testing.T) {
	env := testenv.Start(t, func(c *config.Config) { c.WebhookRetrySchedule = []time.Duration{2 * time.Second} })
	okRc, badRc := newReceiver(t, http.StatusOK), newReceiver(t, http.StatusInternalServerError)
	okHook := subscribe(t, env, okRc, map[string]any{"url": okRc.URL, "eventTypes": []string{"test.created"}})
	badHook := subscribe(t, env, badRc, map[string]any{"url": badRc.URL, "eventTypes": []string{"test.created"}})
	acc := publish(t, env, "test.created", map[string]any{"testId": "t-1"})

	// Poll until the failing receiver's delivery has failed for good,
	// noting what its pending state looked like on the way.
	var pending *models.EventRecipient
	var final models.EventDetail
	deadline := time.Now().Add(30 * time.Second)
	for {
		ev, by := eventDetail(t, env, acc.ID)
		if len(ev.Recipients) != 2 || ev.Recipients[0].SubscriptionID == ev.Recipients[1].SubscriptionID {
			t.Fatalf("recipients %+v, want the two subscriptions", ev.Recipients)
		}
		b := by[badHook.ID]
		if b.Status == models.DeliveryPending && b.Attempts == 1 && pending == nil {
			pending = &b
		}
		if b.Status == models.DeliveryFailed {
			final = ev
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the failing delivery is %+v after 30 s, want failed", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got := badRc.wait(t, 2, time.Second)
	if pending == nil {
		t.Fatal("the failing delivery was never seen pending between its attempts")
	}
	// nextAttemptAt is the scheduled wait (2 s ±10%) after the first attempt.
	if pending.NextAttemptAt == nil || pending.StatusCode == nil || *pending.StatusCode != http.StatusInternalServerError {
		t.Fatalf("pending between attempts: %+v", pending)
	}
	if wait := pending.NextAttemptAt.Sub(got[0].at); wait < 1500*time.Millisecond || wait > 3*time.Second {
		t.Errorf("nextAttemptAt %v is %v after the first attempt, want about 2 s", pending.NextAttemptAt, wait)
	}
	_, by := eventDetail(t, env, acc.ID)
	if b := by[badHook.ID]; b.Status != models.DeliveryFailed || b.Attempts != 2 || b.NextAttemptAt != nil || b.StatusCode == nil || *b.StatusCode != http.StatusInternalServerError {
		t.Errorf("failing delivery at the end: %+v", b)
	}
	if o := by[okHook.ID]; o.Status != models.DeliverySucceeded || o.Attempts != 1 || o.NextAttemptAt != nil || o.StatusCode == nil || *o.StatusCode != http.StatusOK {
		t.Errorf("succeeding delivery: %+v", o)
	}
	if final.Type != models.EventTestCreated || string(final.Data) != `{"testId":"t-1"}` {
		t.Errorf("event %+v", final)
	}
	if okRc.count() != 1 {
		t.Errorf("the accepting receiver got %d requests, want 1", okRc.count())
	}

	// The list has it, the filters agree with the status.
	var page models.Page[models.EventDetail]
	env.DoJSON(t, http.MethodGet, wsPath(env, "/events?type=test.created"), env.AdminKey, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 1 || len(page.Items) != 1 || page.Items[0].ID != acc.ID || page.Items[0].Recipients != nil {
		t.Errorf("events list %+v", page)
	}
	env.DoJSON(t, http.MethodGet, wsPath(env, "/events?type=test.deleted"), env.AdminKey, nil, http.StatusOK, &page)
	if page.Meta.TotalItems != 0 {
		t.Errorf("events of another type %+v", page)
	}
	countRecords := func(hook models.WebhookCreated, query string) int {
		var p models.Page[models.WebhookDelivery]
		env.DoJSON(t, http.MethodGet, wsPath(env, "/webhooks/"+hook.ID.String()+"/deliveries"+query), env.AdminKey, nil, http.StatusOK, &p)
		return p.Meta.TotalItems
	}
	for _, c := range []struct {
		hook  models.WebhookCreated
		query string
		want  int
	}{
		{badHook, "?status=failed", 2}, {badHook, "?status=succeeded", 0},
		{badHook, "?status=failed&eventId=" + acc.ID.String(), 2},
		{okHook, "?status=succeeded&eventId=" + acc.ID.String(), 1}, {okHook, "?status=failed", 0},
		{okHook, "?eventId=" + uuid.NewString(), 0},
	} {
		if n := countRecords(c.hook, c.query); n != c.want {
			t.Errorf("deliveries of %s%s: %d, want %d", c.hook.ID, c.query, n, c.want)
		}
	}

	// Tenancy and roles.
	other, err := env.Store.Bootstrap(context.Background(), "Other", "other-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	member := env.AddMember(t, models.RoleMember)
	for _, c := range []struct {
		path, key string
		want      int
	}{
		{"/workspaces/" + other.WorkspaceID.String() + "/events/" + acc.ID.String(), other.Secret, http.StatusNotFound},
		{wsPath(env, "/events/"+acc.ID.String()), other.Secret, http.StatusNotFound},
		{"/workspaces/" + other.WorkspaceID.String() + "/events", other.Secret, http.StatusOK},
		{wsPath(env, "/events/"+acc.ID.String()), member.Secret, http.StatusForbidden},
		{wsPath(env, "/events"), member.Secret, http.StatusForbidden},
	} {
		status, body := env.Do(t, http.MethodGet, c.path, c.key, nil)
		if status != c.want {
			t.Errorf("GET %s: %d %s, want %d", c.path, status, body, c.want)
		}
	}
	var theirs models.Page[models.EventDetail]
	env.DoJSON(t, http.MethodGet, "/workspaces/"+other.WorkspaceID.String()+"/events", other.Secret, nil, http.StatusOK, &theirs)
	if theirs.Meta.TotalItems != 0 {
		t.Errorf("another workspace lists %+v", theirs)
	}
}
