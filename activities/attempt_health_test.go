package activities_test

import (
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/deliverytest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
)

// pokes counts the events outbox's wake-ups a real Notifier sends, heard
// by a real listener.
type pokes struct{ n atomic.Int32 }

func listenForPokes(t *testing.T, st *store.Store) (*store.Notifier, *pokes) {
	t.Helper()
	ctx := t.Context()
	n := store.NewNotifier(st.DB(), nil)
	go n.Run(ctx)
	wakes := outbox.Listen(ctx, st.DB())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var listening int
		if err := st.DB().NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`).Scan(ctx, &listening); err != nil {
			t.Fatal(err)
		}
		if listening > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener never ran LISTEN")
		}
	}
	p := &pokes{}
	go func() {
		for range wakes[store.OutboxEvents] {
			p.n.Add(1)
		}
	}()
	return n, p
}

// want waits for the n-th wake-up, then checks that no more follow.
func (p *pokes) want(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); p.n.Load() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if got := p.n.Load(); got != n {
		t.Fatalf("%d pokes, want %d", got, n)
	}
}

// healthFixture is the delivery fixture on a clock the test moves, with an
// outbox that counts pokes and a second subscription (never sent to) that
// takes the operational events.
type healthFixture struct {
	*fixture
	now      time.Time
	pokes    *pokes
	listener models.WebhookSubscription
}

func newHealthFixture(t *testing.T) *healthFixture {
	f := &healthFixture{fixture: newFixture(t, true), now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.Acts.Now = func() time.Time { return f.now }
	f.Acts.Outbox, f.pokes = listenForPokes(t, f.Store)
	f.Acts.WebhookDisable = store.DisablePolicy{After: 120 * time.Hour, MinSpan: 12 * time.Hour}
	l, err := f.Store.Webhooks().Create(f.Ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: f.Workspace.WorkspaceID, CreatorID: f.Workspace.UserID, URL: "https://example.com/ops",
		EventTypes: []models.EventType{models.EventWebhookDisabled, models.EventWebhookDeliveryExhausted, models.EventWebhookDeliveryRecovered},
		Enabled:    true,
	}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.listener = l
	return f
}

func (f *healthFixture) try(t *testing.T, in activities.AttemptInput) *activities.AttemptResult {
	t.Helper()
	res, err := f.Acts.AttemptDelivery(f.Ctx, &in)
	if err != nil {
		t.Fatalf("attempt %+v: %v", in, err)
	}
	return res
}

type stateRow struct {
	Status        string     `bun:"status"`
	Attempts      int        `bun:"attempts"`
	NextAttemptAt *time.Time `bun:"next_attempt_at"`
}

func (f *healthFixture) state(t *testing.T, ev models.Event, sub models.WebhookSubscription) stateRow {
	t.Helper()
	var st stateRow
	if err := f.Store.DB().NewRaw(`SELECT status, attempts, next_attempt_at FROM webhook_delivery_states
		WHERE event_id = ? AND subscription_id = ?`, ev.ID, sub.ID).Scan(f.Ctx, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// operational is the workspace's operational events as (type, subject
// event id or reason) pairs, each checked to go to the listener only.
func (f *healthFixture) operational(t *testing.T) []string {
	t.Helper()
	var rows []struct {
		Type       string      `bun:"type"`
		Subject    string      `bun:"subject"`
		Recipients []uuid.UUID `bun:"recipients,array"`
	}
	if err := f.Store.DB().NewRaw(`SELECT type, coalesce(data->>'eventId', data->>'reason') AS subject, recipients
		FROM events WHERE type LIKE 'webhook.%' ORDER BY date_created, type`).Scan(f.Ctx, &rows); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		if !slices.Equal(r.Recipients, []uuid.UUID{f.listener.ID}) {
			t.Fatalf("%s goes to %v, want the listener %s only", r.Type, r.Recipients, f.listener.ID)
		}
		out = append(out, r.Type+" "+r.Subject)
	}
	return out
}

// The attempt activity writes each delivery's state with its record, and
// the exhausted and recovered events with the metric, waking the outbox.
func TestAttemptWritesStateAndRaisesOperationalEvents(t *testing.T) {
	f := newHealthFixture(t)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	rc := newReceiver(t, deliverytest.Answering(500, 500, 200, 410))
	sub, _ := f.Subscribe(t, rc.URL)
	ev := f.Publish(t, `{"secret":"never in an operational event"}`)

	// Attempt 1 fails with a retry 5 s away.
	f.try(t, activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 1, NextAttemptIn: activities.Duration(5 * time.Second), MaxWait: activities.Duration(time.Minute)})
	if st := f.state(t, ev, sub); st.Status != "pending" || st.Attempts != 1 || st.NextAttemptAt == nil || !st.NextAttemptAt.Equal(f.now.Add(5*time.Second)) {
		t.Fatalf("after a failure with a retry: %+v", st)
	}
	// The last scheduled attempt fails: failed, exhausted raised and counted.
	f.now = f.now.Add(5 * time.Second)
	f.try(t, activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 2, Final: true})
	if st := f.state(t, ev, sub); st.Status != "failed" || st.Attempts != 2 || st.NextAttemptAt != nil {
		t.Fatalf("after the last attempt: %+v", st)
	}
	if got := f.operational(t); !slices.Equal(got, []string{"webhook.delivery.exhausted " + ev.ID.String()}) {
		t.Fatalf("operational events %v", got)
	}
	if n := counterValue(t, reg, "webhook_deliveries_exhausted_total"); n != 1 {
		t.Fatalf("exhausted counter %v", n)
	}
	f.pokes.want(t, 1)
	// A redelivery succeeds: succeeded, recovered raised once.
	f.now = f.now.Add(time.Hour)
	f.try(t, activities.AttemptInput{EventID: ev.ID, SubscriptionID: sub.ID, AttemptNumber: 3, Manual: true})
	if st := f.state(t, ev, sub); st.Status != "succeeded" || st.Attempts != 3 {
		t.Fatalf("after the redelivery: %+v", st)
	}
	// A 410 on a final attempt ends the delivery but exhausts nothing.
	other := f.Publish(t, `{}`)
	f.try(t, activities.AttemptInput{EventID: other.ID, SubscriptionID: sub.ID, AttemptNumber: 1, Final: true})
	if st := f.state(t, other, sub); st.Status != "failed" || st.Attempts != 1 {
		t.Fatalf("after a 410: %+v", st)
	}
	want := []string{"webhook.delivery.exhausted " + ev.ID.String(), "webhook.delivery.recovered " + ev.ID.String()}
	if got := f.operational(t); !slices.Equal(got, want) {
		t.Fatalf("operational events %v, want %v", got, want)
	}
	if n := counterValue(t, reg, "webhook_deliveries_exhausted_total"); n != 1 {
		t.Fatalf("exhausted counter %v after a 410", n)
	}
	f.pokes.want(t, 2)

	// A disabled subscription's attempt is skipped and its delivery failed.
	third := f.Publish(t, `{}`)
	if _, err := f.Store.Webhooks().Update(f.Ctx, f.Workspace.WorkspaceID, sub.ID, models.WebhookUpdate{Enabled: new(false)}); err != nil {
		t.Fatal(err)
	}
	if res := f.try(t, activities.AttemptInput{EventID: third.ID, SubscriptionID: sub.ID, AttemptNumber: 1}); res.Outcome != activities.AttemptSkipped {
		t.Fatalf("result %+v", res)
	}
	if st := f.state(t, third, sub); st.Status != "failed" || st.Attempts != 0 {
		t.Fatalf("after a skip: %+v", st)
	}
}

// A subscription failing for the whole window, over two events far enough
// apart, is disabled by the attempt that crosses it, which raises
// webhook.disabled.
func TestAttemptDisablesAFailingSubscription(t *testing.T) {
	f := newHealthFixture(t)
	reg := prometheus.NewRegistry()
	f.Acts.Metrics = activities.NewMetrics(reg)
	rc := newReceiver(t, func(w http.ResponseWriter, _ int) { w.WriteHeader(http.StatusBadGateway) })
	sub, _ := f.Subscribe(t, rc.URL)
	a, b := f.Publish(t, `{}`), f.Publish(t, `{}`)

	f.try(t, activities.AttemptInput{EventID: a.ID, SubscriptionID: sub.ID, AttemptNumber: 1, NextAttemptIn: activities.Duration(time.Minute)})
	f.now = f.now.Add(119 * time.Hour)
	f.try(t, activities.AttemptInput{EventID: b.ID, SubscriptionID: sub.ID, AttemptNumber: 1, NextAttemptIn: activities.Duration(time.Minute)})
	if got, _ := f.Store.Webhooks().Get(f.Ctx, f.Workspace.WorkspaceID, sub.ID); !got.Enabled {
		t.Fatal("disabled before the window ended")
	}
	f.now = f.now.Add(time.Hour)
	f.try(t, activities.AttemptInput{EventID: b.ID, SubscriptionID: sub.ID, AttemptNumber: 2, NextAttemptIn: activities.Duration(time.Minute)})
	got, err := f.Store.Webhooks().Get(f.Ctx, f.Workspace.WorkspaceID, sub.ID)
	if err != nil || got.Enabled || got.DisabledReason == nil || *got.DisabledReason != models.DisabledFailing || got.DisabledAt == nil || !got.DisabledAt.Equal(f.now) {
		t.Fatalf("after the window: %+v, %v", got, err)
	}
	if ops := f.operational(t); !slices.Equal(ops, []string{"webhook.disabled failing"}) {
		t.Fatalf("operational events %v", ops)
	}
	f.pokes.want(t, 1)
	if n := counterValue(t, reg, "webhook_subscriptions_disabled_total"); n != 1 {
		t.Fatalf("disabled counter %v, want 1", n)
	}
	// The next scheduled attempt is skipped.
	f.now = f.now.Add(time.Minute)
	if res := f.try(t, activities.AttemptInput{EventID: b.ID, SubscriptionID: sub.ID, AttemptNumber: 3, Final: true}); res.Outcome != activities.AttemptSkipped {
		t.Fatalf("result %+v", res)
	}
	if n := rc.Count(); n != 3 {
		t.Fatalf("receiver got %d requests, want 3", n)
	}
}
