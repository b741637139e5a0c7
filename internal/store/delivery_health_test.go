package store_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// healthFixture records attempts to one subscription on a clock the test
// moves, as the attempt activity does with its own.
type healthFixture struct {
	*webhookFixture
	sub models.WebhookSubscription
	t0  time.Time
}

func newHealthFixture(t *testing.T, types ...models.EventType) healthFixture {
	t.Helper()
	f := newWebhookFixture(t)
	if len(types) == 0 {
		types = []models.EventType{models.EventTestCreated}
	}
	return healthFixture{webhookFixture: f, sub: f.create(t, f.ws, true, types...),
		t0: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f healthFixture) newEvent(t *testing.T, typ models.EventType) models.Event {
	t.Helper()
	ev, err := f.st.Events().Create(f.ctx, models.NewEvent{WorkspaceID: f.ws.WorkspaceID, Type: typ, Data: json.RawMessage(`{"secret":"data"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// attempt records attempt n of ev at t0+at, failing unless ok.
func (f healthFixture) attempt(t *testing.T, ev models.Event, n int, ok bool, at time.Duration, opts store.RecordOptions) store.RecordedAttempt {
	t.Helper()
	now := f.t0.Add(at)
	rec := models.WebhookDelivery{SubscriptionID: f.sub.ID, EventID: ev.ID, AttemptNumber: n, Success: ok, DateCreated: now}
	if ok {
		rec.StatusCode = new(200)
	} else {
		rec.StatusCode, rec.ErrorMessage = new(500), new("HTTP 500")
	}
	opts.Now = now
	opts.Operational = ev.Type.Operational()
	r, err := f.st.Deliveries().RecordAttempt(f.ctx, rec, opts)
	if err != nil || !r.Wrote {
		t.Fatalf("record attempt %d of %s: wrote %v, %v", n, ev.ID, r.Wrote, err)
	}
	return r
}

type subHealth struct {
	Enabled               bool       `bun:"enabled"`
	DisabledReason        *string    `bun:"disabled_reason"`
	DisabledAt            *time.Time `bun:"disabled_at"`
	FailingSince          *time.Time `bun:"failing_since"`
	FailingFirstEventID   *uuid.UUID `bun:"failing_first_event_id"`
	ExhaustedSinceSuccess bool       `bun:"exhausted_since_success"`
	Xmin                  string     `bun:"xmin"`
}

func (f healthFixture) health(t *testing.T) subHealth {
	t.Helper()
	var h subHealth
	err := f.st.DB().NewRaw(`SELECT enabled, disabled_reason, disabled_at, failing_since, failing_first_event_id,
		exhausted_since_success, xmin::text AS xmin FROM webhook_subscriptions WHERE id = ?`, f.sub.ID).Scan(f.ctx, &h)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type deliveryState struct {
	Status           string     `bun:"status"`
	Attempts         int        `bun:"attempts"`
	NextAttemptAt    *time.Time `bun:"next_attempt_at"`
	LastStatusCode   *int       `bun:"last_status_code"`
	EventDateCreated time.Time  `bun:"event_date_created"`
}

// state is the delivery state of ev to the fixture's subscription; found
// is false without a row.
func (f healthFixture) state(t *testing.T, ev models.Event) (deliveryState, bool) {
	t.Helper()
	var rows []deliveryState
	err := f.st.DB().NewRaw(`SELECT status, attempts, next_attempt_at, last_status_code, event_date_created
		FROM webhook_delivery_states WHERE event_id = ? AND subscription_id = ?`, ev.ID, f.sub.ID).Scan(f.ctx, &rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		return deliveryState{}, false
	}
	return rows[0], true
}

// operational returns the operational events stored in the workspace, oldest first.
func (f healthFixture) operational(t *testing.T) []models.Event {
	t.Helper()
	var ids []uuid.UUID
	err := f.st.DB().NewRaw(`SELECT id FROM events WHERE workspace_id = ? AND type LIKE 'webhook.%' ORDER BY date_created, type`,
		f.ws.WorkspaceID).Scan(f.ctx, &ids)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]models.Event, len(ids))
	for i, id := range ids {
		if out[i], err = f.st.Events().Get(f.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// dataOf is an operational event's data, which must be valid against its
// type's catalogue schema: what GET /v1/event-types promises receivers.
func dataOf(t *testing.T, ev models.Event) map[string]string {
	t.Helper()
	if typ, ok := eventtypes.Lookup(ev.Type); !ok {
		t.Errorf("%s is not in the catalogue", ev.Type)
	} else if p := typ.Check(ev.Data); p != nil {
		t.Errorf("%s data %s breaks its catalogue schema: %+v", ev.Type, ev.Data, p)
	}
	var m map[string]string
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("data %s: %v", ev.Data, err)
	}
	return m
}

var policy = store.DisablePolicy{After: 120 * time.Hour, MinSpan: 12 * time.Hour}

// The delivery state follows the attempts: pending with its next attempt
// while one is scheduled, then failed or succeeded; a repeated run of an
// attempt changes nothing, and an older attempt never overwrites a newer
// one's state.
func TestRecordAttemptWritesDeliveryState(t *testing.T) {
	f := newHealthFixture(t)
	ev := f.newEvent(t, models.EventTestCreated)
	if _, found := f.state(t, ev); found {
		t.Fatal("a state before any attempt")
	}
	next := f.t0.Add(5 * time.Second)
	f.attempt(t, ev, 1, false, 0, store.RecordOptions{Status: models.DeliveryPending, NextAttemptAt: &next})
	st, found := f.state(t, ev)
	if !found || st.Status != "pending" || st.Attempts != 1 || st.NextAttemptAt == nil || !st.NextAttemptAt.Equal(next) ||
		st.LastStatusCode == nil || *st.LastStatusCode != 500 || !st.EventDateCreated.Equal(ev.DateCreated) {
		t.Fatalf("after a failure with a retry scheduled: %+v (found %v)", st, found)
	}

	// The same attempt again (the activity retried): nothing changes.
	again, err := f.st.Deliveries().RecordAttempt(f.ctx, models.WebhookDelivery{SubscriptionID: f.sub.ID, EventID: ev.ID, AttemptNumber: 1, Success: true},
		store.RecordOptions{Now: f.t0.Add(time.Hour), Status: models.DeliverySucceeded})
	if err != nil || again.Wrote || again.Delivery.Success || len(again.Emitted) != 0 {
		t.Fatalf("repeated attempt: %+v, %v", again, err)
	}
	if st2, _ := f.state(t, ev); st2.Status != "pending" || st2.Attempts != 1 {
		t.Fatalf("a repeated attempt changed the state: %+v", st2)
	}

	// The last scheduled attempt fails: failed, nothing next.
	f.attempt(t, ev, 2, false, time.Minute, store.RecordOptions{Status: models.DeliveryFailed})
	if st, _ = f.state(t, ev); st.Status != "failed" || st.Attempts != 2 || st.NextAttemptAt != nil {
		t.Fatalf("after the last attempt failed: %+v", st)
	}
	// A redelivery succeeds.
	f.attempt(t, ev, 3, true, 2*time.Minute, store.RecordOptions{Status: models.DeliverySucceeded})
	if st, _ = f.state(t, ev); st.Status != "succeeded" || st.Attempts != 3 || *st.LastStatusCode != 200 {
		t.Fatalf("after a success: %+v", st)
	}
	// An older attempt number recorded late leaves the newer state alone
	// (attempts is the greatest number made).
	other := f.newEvent(t, models.EventTestCreated)
	f.attempt(t, other, 4, true, 0, store.RecordOptions{})
	f.attempt(t, other, 2, false, time.Minute, store.RecordOptions{Status: models.DeliveryPending, NextAttemptAt: &next})
	if st, _ = f.state(t, other); st.Status != "succeeded" || st.Attempts != 4 {
		t.Fatalf("an older attempt overwrote the state: %+v", st)
	}
}

// A skipped attempt (the subscription disabled) fails a pending delivery,
// keeping its attempts; it never undoes a success.
func TestMarkSkipped(t *testing.T) {
	f := newHealthFixture(t)
	pending, fresh, done := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)
	next := f.t0.Add(time.Minute)
	f.attempt(t, pending, 1, false, 0, store.RecordOptions{Status: models.DeliveryPending, NextAttemptAt: &next})
	f.attempt(t, done, 1, true, 0, store.RecordOptions{})
	for _, ev := range []models.Event{pending, fresh, done} {
		if err := f.st.Deliveries().MarkSkipped(f.ctx, f.sub.ID, ev.ID, f.t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := f.state(t, pending); st.Status != "failed" || st.Attempts != 1 || st.NextAttemptAt != nil || *st.LastStatusCode != 500 {
		t.Fatalf("pending then skipped: %+v", st)
	}
	if st, found := f.state(t, fresh); !found || st.Status != "failed" || st.Attempts != 0 || st.NextAttemptAt != nil || st.LastStatusCode != nil {
		t.Fatalf("skipped before any attempt: %+v (found %v)", st, found)
	}
	if st, _ := f.state(t, done); st.Status != "succeeded" {
		t.Fatalf("succeeded then skipped: %+v", st)
	}
	// A deleted subscription or event: nothing to write, no error.
	if err := f.st.Deliveries().MarkSkipped(f.ctx, uuid.New(), pending.ID, f.t0); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Deliveries().MarkSkipped(f.ctx, f.sub.ID, uuid.New(), f.t0); err != nil {
		t.Fatal(err)
	}
}

// The failing window opens at the first failure (with its event), stays
// put through further failures, and one success closes it. A success on a
// healthy subscription leaves the row unwritten.
func TestRecordAttemptFailingWindow(t *testing.T) {
	f := newHealthFixture(t)
	a, b := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)

	before := f.health(t)
	f.attempt(t, a, 1, true, 0, store.RecordOptions{Disable: policy})
	if h := f.health(t); h.Xmin != before.Xmin || h.FailingSince != nil {
		t.Fatalf("a success on a healthy subscription wrote its row: %+v, was %+v", h, before)
	}

	f.attempt(t, b, 1, false, time.Hour, store.RecordOptions{Disable: policy})
	h := f.health(t)
	if h.FailingSince == nil || !h.FailingSince.Equal(f.t0.Add(time.Hour)) || h.FailingFirstEventID == nil || *h.FailingFirstEventID != b.ID || !h.Enabled {
		t.Fatalf("after the first failure: %+v", h)
	}
	c := f.newEvent(t, models.EventTestCreated)
	f.attempt(t, c, 1, false, 2*time.Hour, store.RecordOptions{Disable: policy})
	f.attempt(t, b, 2, false, 3*time.Hour, store.RecordOptions{Disable: policy})
	if h2 := f.health(t); !h2.FailingSince.Equal(*h.FailingSince) || *h2.FailingFirstEventID != b.ID || h2.Xmin != h.Xmin {
		t.Fatalf("later failures moved the window or wrote the row: %+v, was %+v", h2, h)
	}

	f.attempt(t, c, 2, true, 4*time.Hour, store.RecordOptions{Disable: policy})
	if h = f.health(t); h.FailingSince != nil || h.FailingFirstEventID != nil || !h.Enabled {
		t.Fatalf("a success left the window open: %+v", h)
	}
	if ops := f.operational(t); len(ops) != 0 {
		t.Fatalf("operational events without exhaustion or disabling: %+v", ops)
	}
}

// A subscription is disabled only once every attempt has failed for the
// whole window, and the failures span two events at least MinSpan apart;
// a success resets the window. Disabling raises webhook.disabled once.
func TestRecordAttemptDisablesAfterTheWindow(t *testing.T) {
	f := newHealthFixture(t)
	a, b := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)
	opts := store.RecordOptions{Disable: policy}

	f.attempt(t, a, 1, false, 0, opts)
	// An update that sends enabled: true to an enabled subscription (a
	// client sending the whole object) leaves its window alone.
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, f.sub.ID, models.WebhookUpdate{Enabled: new(true)}); err != nil {
		t.Fatal(err)
	}
	if h := f.health(t); h.FailingSince == nil || !h.FailingSince.Equal(f.t0) {
		t.Fatalf("enabled: true on an enabled subscription moved its window: %+v", h)
	}
	// Just short of the window, with another event: still enabled.
	f.attempt(t, b, 1, false, policy.After-time.Second, opts)
	// The window reached, but by the event that opened it: still enabled.
	f.attempt(t, a, 2, false, policy.After, opts)
	if h := f.health(t); !h.Enabled || h.DisabledReason != nil {
		t.Fatalf("disabled too soon: %+v", h)
	}
	// The window reached with another event: disabled.
	r := f.attempt(t, b, 2, false, policy.After, opts)
	h := f.health(t)
	if h.Enabled || h.DisabledReason == nil || *h.DisabledReason != "failing" || h.DisabledAt == nil || !h.DisabledAt.Equal(f.t0.Add(policy.After)) {
		t.Fatalf("not disabled after the window: %+v", h)
	}
	if !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDisabled}) {
		t.Fatalf("emitted %v, want webhook.disabled", r.Emitted)
	}
	got, err := f.st.Webhooks().Get(f.ctx, f.ws.WorkspaceID, f.sub.ID)
	if err != nil || got.Enabled || got.DisabledReason == nil || *got.DisabledReason != models.DisabledFailing || got.DisabledAt == nil {
		t.Fatalf("the API's view: %+v, %v", got, err)
	}
	ops := f.operational(t)
	if len(ops) != 1 || ops[0].Type != models.EventWebhookDisabled {
		t.Fatalf("operational events %+v", ops)
	}
	if d := dataOf(t, ops[0]); len(d) != 2 || d["subscriptionId"] != f.sub.ID.String() || d["reason"] != "failing" {
		t.Fatalf("webhook.disabled data %v", d)
	}
	// Attempts still in flight fail later: no second webhook.disabled.
	if r := f.attempt(t, a, 3, false, policy.After+time.Hour, opts); len(r.Emitted) != 0 {
		t.Fatalf("a disabled subscription's failure emitted %v", r.Emitted)
	}

	// Enabled again by hand: the window starts afresh.
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, f.sub.ID, models.WebhookUpdate{Enabled: new(true)}); err != nil {
		t.Fatal(err)
	}
	f.attempt(t, a, 4, false, 2*policy.After, opts)
	if h := f.health(t); !h.Enabled || h.DisabledReason != nil || !h.FailingSince.Equal(f.t0.Add(2*policy.After)) {
		t.Fatalf("after enabling again: %+v", h)
	}
}

// A delivery that succeeded stays succeeded when a redelivery after it
// fails (the receiver has the event: a recovery must not send it again),
// with the attempts and the last status code moving on.
func TestRecordAttemptSucceededStays(t *testing.T) {
	f := newHealthFixture(t)
	ev := f.newEvent(t, models.EventTestCreated)
	f.attempt(t, ev, 1, true, 0, store.RecordOptions{})
	f.attempt(t, ev, 2, false, time.Hour, store.RecordOptions{Status: models.DeliveryFailed})
	st, ok := f.state(t, ev)
	if !ok || st.Status != "succeeded" || st.Attempts != 2 || st.NextAttemptAt != nil || st.LastStatusCode == nil || *st.LastStatusCode != 500 {
		t.Fatalf("state after a failed redelivery of a delivered event: %+v (%v)", st, ok)
	}
}

// One success inside the window resets it: failures on both sides of it
// never add up.
func TestRecordAttemptSuccessResetsTheWindow(t *testing.T) {
	f := newHealthFixture(t)
	a, b, c := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)
	opts := store.RecordOptions{Disable: policy}
	f.attempt(t, a, 1, false, 0, opts)
	f.attempt(t, b, 1, true, 100*time.Hour, opts)
	f.attempt(t, c, 1, false, 101*time.Hour, opts)
	f.attempt(t, a, 2, false, policy.After+time.Hour, opts)
	if h := f.health(t); !h.Enabled || !h.FailingSince.Equal(f.t0.Add(101*time.Hour)) {
		t.Fatalf("disabled across a success: %+v", h)
	}
	f.attempt(t, a, 3, false, 101*time.Hour+policy.After, opts)
	if h := f.health(t); h.Enabled {
		t.Fatalf("not disabled a whole window after the reset: %+v", h)
	}
}

// The two failed events must be at least MinSpan apart even when the
// window itself is shorter.
func TestRecordAttemptDisableNeedsTheMinimumSpan(t *testing.T) {
	f := newHealthFixture(t)
	a, b := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)
	opts := store.RecordOptions{Disable: store.DisablePolicy{After: time.Hour, MinSpan: 12 * time.Hour}}
	f.attempt(t, a, 1, false, 0, opts)
	f.attempt(t, b, 1, false, 2*time.Hour, opts)
	if h := f.health(t); !h.Enabled {
		t.Fatalf("disabled with failures 2h apart: %+v", h)
	}
	f.attempt(t, b, 2, false, 12*time.Hour, opts)
	if h := f.health(t); h.Enabled {
		t.Fatalf("not disabled with failures 12h apart: %+v", h)
	}
	// No policy: never disabled.
	g := newHealthFixture(t)
	a, b = g.newEvent(t, models.EventTestCreated), g.newEvent(t, models.EventTestCreated)
	g.attempt(t, a, 1, false, 0, store.RecordOptions{})
	g.attempt(t, b, 1, false, 365*24*time.Hour, store.RecordOptions{})
	if h := g.health(t); !h.Enabled {
		t.Fatalf("disabled without a policy: %+v", h)
	}
}

// A final scheduled failure raises webhook.delivery.exhausted (each time),
// and the next success webhook.delivery.recovered, once.
func TestRecordAttemptExhaustedThenRecovered(t *testing.T) {
	f := newHealthFixture(t)
	a, b, c := f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated), f.newEvent(t, models.EventTestCreated)

	// A final failure that is not the schedule's (Exhausts false): nothing.
	if r := f.attempt(t, a, 1, false, 0, store.RecordOptions{}); len(r.Emitted) != 0 {
		t.Fatalf("emitted %v", r.Emitted)
	}
	if f.health(t).ExhaustedSinceSuccess {
		t.Fatal("exhausted without Exhausts")
	}
	if r := f.attempt(t, a, 2, false, time.Minute, store.RecordOptions{Exhausts: true}); !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDeliveryExhausted}) {
		t.Fatalf("emitted %v, want exhausted", r.Emitted)
	}
	if r := f.attempt(t, b, 1, false, 2*time.Minute, store.RecordOptions{Exhausts: true}); !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDeliveryExhausted}) {
		t.Fatalf("second exhausted delivery emitted %v", r.Emitted)
	}
	if !f.health(t).ExhaustedSinceSuccess {
		t.Fatal("exhausted_since_success not set")
	}
	if r := f.attempt(t, c, 1, true, time.Hour, store.RecordOptions{}); !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDeliveryRecovered}) {
		t.Fatalf("emitted %v, want recovered", r.Emitted)
	}
	if r := f.attempt(t, c, 2, true, 2*time.Hour, store.RecordOptions{}); len(r.Emitted) != 0 {
		t.Fatalf("a second success emitted %v", r.Emitted)
	}
	ops := f.operational(t)
	if len(ops) != 3 {
		t.Fatalf("operational events %+v", ops)
	}
	for i, want := range []struct {
		typ models.EventType
		ev  models.Event
	}{{models.EventWebhookDeliveryExhausted, a}, {models.EventWebhookDeliveryExhausted, b}, {models.EventWebhookDeliveryRecovered, c}} {
		d := dataOf(t, ops[i])
		if ops[i].Type != want.typ || len(d) != 2 || d["subscriptionId"] != f.sub.ID.String() || d["eventId"] != want.ev.ID.String() {
			t.Fatalf("event %d: %s %v, want %s about %s (ids only, never the event's data)", i, ops[i].Type, d, want.typ, want.ev.ID)
		}
	}
}

// Operational events count for health but never raise exhausted or
// recovered, so failing subscriptions cannot feed each other events.
func TestRecordAttemptOperationalEventsNeverCascade(t *testing.T) {
	f := newHealthFixture(t, models.EventTestCreated, models.EventWebhookDeliveryExhausted, models.EventWebhookDisabled)
	op := f.newEvent(t, models.EventWebhookDeliveryExhausted)
	regular := f.newEvent(t, models.EventTestCreated)

	if r := f.attempt(t, op, 1, false, 0, store.RecordOptions{Exhausts: true, Disable: policy}); len(r.Emitted) != 0 {
		t.Fatalf("an operational event's exhaustion emitted %v", r.Emitted)
	}
	h := f.health(t)
	if h.ExhaustedSinceSuccess || h.FailingSince == nil || *h.FailingFirstEventID != op.ID {
		t.Fatalf("after an operational event failed: %+v (want failing, not exhausted)", h)
	}
	// It still counts towards disabling.
	op2 := f.newEvent(t, models.EventWebhookDisabled)
	if r := f.attempt(t, op2, 1, false, policy.After, store.RecordOptions{Exhausts: true, Disable: policy}); !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDisabled}) {
		t.Fatalf("operational failures over the window emitted %v, want webhook.disabled", r.Emitted)
	}
	if _, err := f.st.Webhooks().Update(f.ctx, f.ws.WorkspaceID, f.sub.ID, models.WebhookUpdate{Enabled: new(true)}); err != nil {
		t.Fatal(err)
	}

	// Exhausted by a regular event, then an operational event succeeds:
	// the window closes but recovered waits for a regular success.
	f.attempt(t, regular, 1, false, policy.After+time.Hour, store.RecordOptions{Exhausts: true})
	if r := f.attempt(t, op, 2, true, policy.After+2*time.Hour, store.RecordOptions{}); len(r.Emitted) != 0 {
		t.Fatalf("an operational event's success emitted %v", r.Emitted)
	}
	if h := f.health(t); !h.ExhaustedSinceSuccess || h.FailingSince != nil {
		t.Fatalf("after an operational success: %+v", h)
	}
	if r := f.attempt(t, regular, 2, true, policy.After+3*time.Hour, store.RecordOptions{}); !slices.Equal(r.Emitted, []models.EventType{models.EventWebhookDeliveryRecovered}) {
		t.Fatalf("the regular success emitted %v, want recovered", r.Emitted)
	}
}

// Operational events go to the workspace's other enabled subscriptions
// that take their type: never the subscription concerned, a disabled one,
// one that does not take the type, or another workspace's. With none, the
// event is stored dispatched and the outbox is not worth waking.
func TestRecordAttemptOperationalRecipients(t *testing.T) {
	f := newHealthFixture(t, models.EventTestCreated, models.EventWebhookDeliveryExhausted)
	ev := f.newEvent(t, models.EventTestCreated)

	r := f.attempt(t, ev, 1, false, 0, store.RecordOptions{Exhausts: true})
	ops := f.operational(t)
	if len(ops) != 1 || len(ops[0].Recipients) != 0 || ops[0].DispatchedAt == nil || r.Dispatch {
		t.Fatalf("with no other subscription: %+v, dispatch %v", ops, r.Dispatch)
	}

	taker := f.create(t, f.ws, true, models.EventWebhookDeliveryExhausted)
	takerToo := f.create(t, f.ws, true, models.EventTestUpdated, models.EventWebhookDeliveryExhausted)
	f.create(t, f.ws, false, models.EventWebhookDeliveryExhausted)   // disabled
	f.create(t, f.ws, true, models.EventWebhookDisabled)             // another type
	f.create(t, f.other, true, models.EventWebhookDeliveryExhausted) // another workspace
	ev2 := f.newEvent(t, models.EventTestCreated)
	r = f.attempt(t, ev2, 1, false, time.Minute, store.RecordOptions{Exhausts: true})
	ops = f.operational(t)
	want := []uuid.UUID{taker.ID, takerToo.ID}
	slices.SortFunc(want, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	if len(ops) != 2 || !slices.Equal(ops[1].Recipients, want) || ops[1].DispatchedAt != nil || !r.Dispatch {
		t.Fatalf("recipients %v (dispatched %v, dispatch %v), want %v", ops[1].Recipients, ops[1].DispatchedAt, r.Dispatch, want)
	}
	if !ops[1].DateCreated.Equal(f.t0.Add(time.Minute)) || ops[1].WorkspaceID != f.ws.WorkspaceID {
		t.Fatalf("stored %+v", ops[1])
	}
}
