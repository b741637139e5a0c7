package activities_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/models"
)

// recoverPage is a subscription with failed deliveries (3 attempts each)
// and a RecoverPage whose redeliveries are recorded, each "made" at once
// (its delivery state's attempts raised) as the delivery workflow would.
type recoverPage struct {
	f      *fixture
	sub    uuid.UUID
	events []models.Event
	since  time.Time

	mu       sync.Mutex
	signals  []uuid.UUID
	attempts []int
}

func newRecoverPage(t *testing.T, n int) *recoverPage {
	t.Helper()
	f := newFixture(t, true)
	sub, _ := f.Subscribe(t, "https://example.com/hook")
	p := &recoverPage{f: f, sub: sub.ID, since: time.Now().Add(-time.Hour)}
	for i := range n {
		ev := f.Publish(t, `{}`)
		p.exec(t, `UPDATE events SET dispatched_at = now(), date_created = ? WHERE id = ?`,
			p.since.Add(time.Duration(i)*time.Second), ev.ID)
		p.exec(t, `INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, event_date_created)
			SELECT id, ?, 'failed', 3, date_created FROM events WHERE id = ?`, sub.ID, ev.ID)
		got, err := f.Store.Events().Get(f.Ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		p.events = append(p.events, got)
	}
	f.Acts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Acts.Redeliver = func(ctx context.Context, ev models.Event, sub uuid.UUID, _ string, attempt int) error {
		p.mu.Lock()
		p.signals, p.attempts = append(p.signals, ev.ID), append(p.attempts, attempt)
		p.mu.Unlock()
		p.exec(t, `UPDATE webhook_delivery_states SET attempts = attempts + 1 WHERE event_id = ? AND subscription_id = ?`, ev.ID, sub)
		return nil
	}
	return p
}

func (p *recoverPage) exec(t *testing.T, q string, args ...any) {
	if _, err := p.f.Store.DB().ExecContext(context.Background(), q, args...); err != nil {
		t.Error(err)
	}
}

// run executes RecoverPage (pages of 10) resumed from heartbeat details.
func (p *recoverPage) run(t *testing.T, heartbeat any) *activities.RecoverPageResult {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.SetTestTimeout(20 * time.Second)
	env.RegisterActivity(p.f.Acts)
	env.SetHeartbeatDetails(heartbeat)
	val, err := env.ExecuteActivity(p.f.Acts.RecoverPage, &activities.RecoverPageInput{
		WorkspaceID: p.f.Workspace.WorkspaceID, SubscriptionID: p.sub,
		Since: p.since, Until: time.Now(), PageSize: 10, RequestID: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	var res activities.RecoverPageResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	return &res
}

// seen is a heartbeated page entry.
func seen(ev models.Event, attempts int) map[string]any {
	return map[string]any{"eventId": ev.ID, "attempts": attempts}
}

// A page resumed after a crash works on the page its heartbeat holds, not
// on a fresh read: the first attempt read three failed deliveries (3
// attempts each) and signalled two, whose redeliveries were made and
// failed again (4 attempts, still failed), but its last heartbeat to
// reach the server says one. The retry signals the second and the third,
// both naming attempt 4, the one the first read asked for, so the delivery
// workflow drops the second's (made already) instead of making a 5th; it
// skips none and does not signal the first again. The result is the
// page's as first read.
func TestRecoverPageResumesTheHeartbeatedPage(t *testing.T) {
	p := newRecoverPage(t, 3)
	for _, ev := range p.events[:2] {
		p.exec(t, `UPDATE webhook_delivery_states SET attempts = 4 WHERE event_id = ? AND subscription_id = ?`, ev.ID, p.sub)
	}
	last := p.events[2]
	res := p.run(t, map[string]any{
		"found": 3, "redelivered": 1, "done": true,
		"cursor":    map[string]any{"eventDateCreated": last.DateCreated, "eventId": last.ID},
		"page":      []any{seen(p.events[0], 3), seen(p.events[1], 3), seen(p.events[2], 3)},
		"signalled": 1,
	})
	if want := []uuid.UUID{p.events[1].ID, p.events[2].ID}; !slices.Equal(p.signals, want) {
		t.Fatalf("signalled %v, want %v", p.signals, want)
	}
	if !slices.Equal(p.attempts, []int{4, 4}) {
		t.Fatalf("signals name attempts %v, want 4 and 4 (the first read's 3 attempts, plus one)", p.attempts)
	}
	if res.Found != 3 || res.Redelivered != 3 || !res.Done || res.Cursor == nil || res.Cursor.EventID != last.ID {
		t.Fatalf("result %+v", res)
	}
}

// A page resumed in its wait keeps the wait's deadline: past, it returns
// at once though its redelivery was never made, rather than waiting
// RecoverPageWait again on every retry.
func TestRecoverPageResumedWaitKeepsItsDeadline(t *testing.T) {
	p := newRecoverPage(t, 1)
	ev := p.events[0]
	done := make(chan *activities.RecoverPageResult, 1)
	go func() {
		done <- p.run(t, map[string]any{
			"found": 1, "redelivered": 1, "done": true,
			"cursor":    map[string]any{"eventDateCreated": ev.DateCreated, "eventId": ev.ID},
			"page":      []any{seen(ev, 3)},
			"signalled": 1,
			"waitUntil": time.Now().Add(-time.Second),
		})
	}()
	var res *activities.RecoverPageResult
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the resumed page is still waiting after 5 s")
	}
	if len(p.signals) != 0 || res.Found != 1 || res.Redelivered != 1 || !res.Done {
		t.Fatalf("signals %v, result %+v", p.signals, res)
	}
}

// A subscription disabled during a page (here by its first redelivery's
// failure, as the automatic disable does) stops the recovery: the page
// says so instead of ending as if its redeliveries had all been made.
func TestRecoverPageStopsWhenDisabledMidPage(t *testing.T) {
	p := newRecoverPage(t, 3)
	made := p.f.Acts.Redeliver
	p.f.Acts.Redeliver = func(ctx context.Context, ev models.Event, sub uuid.UUID, req string, attempt int) error {
		p.exec(t, `UPDATE webhook_subscriptions SET enabled = false, disabled_reason = 'failing', disabled_at = now() WHERE id = ?`, sub)
		return made(ctx, ev, sub, req, attempt)
	}
	res := p.run(t, nil)
	if res.Stopped != models.RecoveryStopDisabled {
		t.Fatalf("result %+v, want stopped: %s", res, models.RecoveryStopDisabled)
	}
}
