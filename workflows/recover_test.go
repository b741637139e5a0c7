package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// recovery is a RecoverWorkflow over the real RecoverPage activity and a
// fresh database, with the redelivery signals recorded instead of sent;
// each one's attempt is "made" at once (its delivery state's attempts
// raised), unless hold is set.
type recovery struct {
	t      *testing.T
	st     *store.Store
	ws     uuid.UUID
	sub    uuid.UUID
	failed []uuid.UUID // the sub's failed deliveries in the window, oldest first
	since  time.Time
	until  time.Time

	mu        sync.Mutex
	signalled []uuid.UUID
	requests  []string
	attempts  []int // the attempt number each signal named
	// hold leaves the redeliveries unmade: the test makes them (made).
	hold bool
	// failAt makes the n-th redelivery call fail once (0: never), as a
	// Temporal refusing a signal would.
	failAt int
	calls  int
	// onSignal runs after each recorded signal (the count so far).
	onSignal func(n int)
}

// newRecovery stores n failed deliveries of sub in the window, plus
// deliveries the recovery must leave alone: a succeeded one, a failed one
// before the window, and a failed one of another subscription.
func newRecovery(t *testing.T, n int) *recovery {
	t.Helper()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	creds, err := st.Bootstrap(ctx, "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	newSub := func() uuid.UUID {
		id := uuid.New()
		if _, err := st.Webhooks().Create(ctx, id, models.NewWebhook{
			WorkspaceID: creds.WorkspaceID, CreatorID: creds.UserID, URL: "https://example.com/hook",
			EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
		}, []byte("sealed"), 0); err != nil {
			t.Fatal(err)
		}
		return id
	}
	r := &recovery{t: t, st: st, ws: creds.WorkspaceID, sub: newSub()}
	other := newSub()
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	r.since, r.until = base, base.Add(time.Duration(n+1)*time.Minute)
	event := func(at time.Time, sub uuid.UUID, status string) uuid.UUID {
		ev, err := st.Events().Create(ctx, models.NewEvent{WorkspaceID: r.ws, Type: models.EventTestCreated, Data: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			if _, err := st.DB().ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		exec(`UPDATE events SET date_created = ?, dispatched_at = now() WHERE id = ?`, at, ev.ID)
		exec(`INSERT INTO webhook_delivery_states (event_id, subscription_id, status, attempts, event_date_created)
			VALUES (?, ?, ?, 3, ?)`, ev.ID, sub, status, at)
		return ev.ID
	}
	for i := range n {
		r.failed = append(r.failed, event(base.Add(time.Duration(i)*time.Minute), r.sub, "failed"))
	}
	event(base.Add(30*time.Second), r.sub, "succeeded")
	event(base.Add(-time.Minute), r.sub, "failed")
	event(base.Add(30*time.Second), other, "failed")
	return r
}

func (r *recovery) redeliver(ctx context.Context, ev models.Event, sub uuid.UUID, requestID string, attempt int) error {
	r.mu.Lock()
	r.calls++
	if r.calls == r.failAt {
		r.mu.Unlock()
		return errors.New("temporal: unavailable")
	}
	if sub != r.sub || ev.WorkspaceID != r.ws || ev.DispatchedAt == nil {
		r.mu.Unlock()
		r.t.Errorf("redelivery of %+v to %s", ev, sub)
		return nil
	}
	r.signalled = append(r.signalled, ev.ID)
	r.requests = append(r.requests, requestID)
	r.attempts = append(r.attempts, attempt)
	n, hook, hold := len(r.signalled), r.onSignal, r.hold
	r.mu.Unlock()
	if !hold {
		r.made(ctx, ev.ID)
	}
	if hook != nil {
		hook(n)
	}
	return nil
}

// made does what the delivery workflow does for a redelivery: one more
// attempt recorded in the event's delivery state.
func (r *recovery) made(ctx context.Context, event uuid.UUID) {
	if _, err := r.st.DB().ExecContext(ctx, `UPDATE webhook_delivery_states SET attempts = attempts + 1
		WHERE event_id = ? AND subscription_id = ?`, event, r.sub); err != nil {
		r.t.Error(err)
	}
}

// signals is how many redeliveries were signalled so far.
func (r *recovery) signals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.signalled)
}

// run runs one workflow run of in and returns its progress as the query
// answers it after the run, and the next run's input when it continued as
// new (nil when it finished).
func (r *recovery) run(in *workflows.RecoverInput) (*workflows.RecoverProgress, *workflows.RecoverInput) {
	r.t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflows.RecoverWorkflowID(r.sub)})
	worker.Register(env, &activities.Activities{
		Store: r.st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Redeliver: r.redeliver,
	})
	env.ExecuteWorkflow(workflows.RecoverWorkflow, in)
	if !env.IsWorkflowCompleted() {
		r.t.Fatal("workflow not completed")
	}
	v, err := env.QueryWorkflow(workflows.RecoverProgressQuery)
	if err != nil {
		r.t.Fatal(err)
	}
	var p workflows.RecoverProgress
	if err := v.Get(&p); err != nil {
		r.t.Fatal(err)
	}
	var can *workflow.ContinueAsNewError
	switch err := env.GetWorkflowError(); {
	case errors.As(err, &can):
		var next workflows.RecoverInput
		if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
			r.t.Fatal(err)
		}
		return &p, &next
	case err != nil:
		r.t.Fatal(err)
	}
	var res workflows.RecoverProgress
	if err := env.GetWorkflowResult(&res); err != nil {
		r.t.Fatal(err)
	}
	if res.Found != p.Found || res.State != p.State || res.Redelivered != p.Redelivered {
		r.t.Fatalf("result %+v, query %+v", res, p)
	}
	return &p, nil
}

func (r *recovery) input(pageSize, pagesPerRun int) *workflows.RecoverInput {
	return &workflows.RecoverInput{
		WorkspaceID: r.ws, SubscriptionID: r.sub, Since: r.since, Until: r.until,
		StartedAt: r.since.Add(time.Hour), PageSize: pageSize, PagesPerRun: pagesPerRun,
	}
}

// Seven failed deliveries, pages of 3, two pages a run: the first run
// redelivers six and continues as new with its progress (the query says
// running, 6 found); the second redelivers the seventh and completes.
// Every failed delivery of the window is signalled once, oldest first,
// with the recovery's request id, and nothing else is.
func TestRecoverWorkflowPagesAndContinuesAsNew(t *testing.T) {
	r := newRecovery(t, 7)
	p, next := r.run(r.input(3, 2))
	if next == nil {
		t.Fatalf("first run finished (%+v), want continue-as-new after 2 pages", p)
	}
	if p.State != models.RecoveryRunning || p.Found != 6 || p.Redelivered != 6 || p.Done || p.ID == "" {
		t.Fatalf("first run's progress %+v", p)
	}
	if next.Progress == nil || next.Progress.Found != 6 || next.Progress.Cursor == nil || next.Progress.Cursor.EventID != r.failed[5] {
		t.Fatalf("carried input %+v", next)
	}
	p, again := r.run(next)
	if again != nil {
		t.Fatalf("second run continued as new: %+v", again)
	}
	if p.State != models.RecoveryCompleted || !p.Done || p.Found != 7 || p.Redelivered != 7 || p.FinishedAt == nil {
		t.Fatalf("final progress %+v", p)
	}
	if !p.StartedAt.Equal(r.since.Add(time.Hour)) || !p.Since.Equal(r.since) || !p.Until.Equal(r.until) {
		t.Fatalf("final progress %+v lost the request's window or start", p)
	}
	if !slices.Equal(r.signalled, r.failed) {
		t.Fatalf("signalled %v, want %v", r.signalled, r.failed)
	}
	for _, id := range r.requests {
		if id != "recover:"+workflows.RecoverWorkflowID(r.sub) {
			t.Fatalf("request id %q", id)
		}
	}
	// Each delivery had 3 attempts: each signal asks for the 4th.
	for i, n := range r.attempts {
		if n != 4 {
			t.Fatalf("signal %d names attempt %d, want 4", i, n)
		}
	}
}

// A redelivery refused mid-page fails the activity; its retry resumes from
// the heartbeat, after the last event signalled: every event once, none
// skipped, none twice.
func TestRecoverWorkflowResumesAfterActivityRetry(t *testing.T) {
	r := newRecovery(t, 5)
	r.failAt = 3
	p, next := r.run(r.input(4, 10))
	if next != nil {
		t.Fatal("continued as new")
	}
	if r.calls != 6 {
		t.Errorf("%d redelivery calls, want 6 (5 events and the refused one)", r.calls)
	}
	if !slices.Equal(r.signalled, r.failed) {
		t.Fatalf("signalled %v, want each of %v once", r.signalled, r.failed)
	}
	if p.State != models.RecoveryCompleted || p.Found != 5 || p.Redelivered != 5 {
		t.Fatalf("progress %+v", p)
	}
}

// A subscription disabled during a recovery stops it at the next page,
// and the progress says why; deleted, likewise.
func TestRecoverWorkflowStopsWhenSubscriptionGoes(t *testing.T) {
	for _, tc := range []struct {
		name, sql, reason string
	}{
		{"disabled", `UPDATE webhook_subscriptions SET enabled = false WHERE id = ?`, models.RecoveryStopDisabled},
		{"deleted", `DELETE FROM webhook_subscriptions WHERE id = ?`, models.RecoveryStopDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecovery(t, 6)
			r.onSignal = func(n int) {
				if n == 2 {
					if _, err := r.st.DB().ExecContext(context.Background(), tc.sql, r.sub); err != nil {
						t.Error(err)
					}
				}
			}
			p, next := r.run(r.input(2, 10))
			if next != nil {
				t.Fatal("continued as new")
			}
			if p.State != models.RecoveryStopped || p.StopReason != tc.reason || !p.Done || p.Found != 2 || len(r.signalled) != 2 {
				t.Fatalf("progress %+v after %d signals", p, len(r.signalled))
			}
		})
	}
}
