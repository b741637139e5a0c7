package workflows_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
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

// secretWorkflow runs the WebhookSecret workflow with time skipping against
// the real activities on a fresh database. Rotations date their grace
// period by the database's clock (the real time, about t0, whenever the
// workflow's clock is), so tests measure against the expiry each rotation
// returns.
type secretWorkflow struct {
	t   *testing.T
	env *testsuite.TestWorkflowEnvironment
	st  *store.Store
	ws  uuid.UUID
	sub uuid.UUID
	t0  time.Time
}

func newSecretWorkflow(t *testing.T) *secretWorkflow {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	creds, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	sub := uuid.New()
	if _, err := st.Webhooks().Create(context.Background(), sub, models.NewWebhook{
		WorkspaceID: creds.WorkspaceID, CreatorID: creds.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
	}, []byte("first"), 0); err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	w := &secretWorkflow{t: t, env: env, st: st, ws: creds.WorkspaceID, sub: sub, t0: time.Now().UTC().Truncate(time.Second)}
	env.SetStartTime(w.t0)
	worker.Register(env, &activities.Activities{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: env.Now})
	return w
}

// rotate rotates the secret to sealed and returns the grace period's end
// as an offset from t0.
func (w *secretWorkflow) rotate(sealed string, grace time.Duration) time.Duration {
	w.t.Helper()
	exp, err := w.st.Webhooks().RotateSecret(context.Background(), w.ws, w.sub, []byte(sealed), nil, grace)
	if err != nil {
		w.t.Fatal(err)
	}
	if exp == nil {
		return 0
	}
	return exp.Sub(w.t0)
}

func (w *secretWorkflow) signal() {
	w.env.SignalWorkflow(workflows.WebhookSecretRotatedSignal, workflows.WebhookSecretRotation{Rotation: 2})
}

// previous is the stored previous secret ("" when none).
func (w *secretWorkflow) previous() string {
	w.t.Helper()
	tg, err := w.st.Webhooks().Target(context.Background(), w.sub)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(tg.PreviousSecretCiphertext)
}

func (w *secretWorkflow) expectPrevious(when, want string) {
	w.t.Helper()
	if got := w.previous(); got != want {
		w.t.Errorf("%s: stored previous secret %q, want %q", when, got, want)
	}
}

// run executes the workflow to its end: its outcome and how long it lived
// in workflow time.
func (w *secretWorkflow) run() (string, time.Duration) {
	w.t.Helper()
	w.env.ExecuteWorkflow(workflows.WebhookSecret, &workflows.WebhookSecretInput{WorkspaceID: w.ws, SubscriptionID: w.sub})
	if !w.env.IsWorkflowCompleted() {
		w.t.Fatal("the workflow did not complete")
	}
	if err := w.env.GetWorkflowError(); err != nil {
		w.t.Fatalf("workflow failed: %v", err)
	}
	var res workflows.WebhookSecretResult
	if err := w.env.GetWorkflowResult(&res); err != nil {
		w.t.Fatal(err)
	}
	return res.Outcome, w.env.Now().Sub(w.t0)
}

// endsAt checks the workflow ended right at the grace period's end.
func endsAt(t *testing.T, outcome string, lived, graceEnd time.Duration) {
	t.Helper()
	if outcome != workflows.WebhookSecretOutcomeIdle || lived < graceEnd || lived > graceEnd+time.Minute {
		t.Fatalf("outcome %q after %v, want idle right after the grace period's end at %v", outcome, lived, graceEnd)
	}
}

// The previous secret stays for the grace period and is erased at its end,
// by the durable timer; two activity runs (start, end of grace).
func TestWebhookSecretWorkflowEndsGrace(t *testing.T) {
	w := newSecretWorkflow(t)
	end := w.rotate("second", 24*time.Hour)
	runs := 0
	w.env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { runs++ })
	w.env.RegisterDelayedCallback(func() { w.expectPrevious("a minute before the end of grace", "first") }, end-time.Minute)
	outcome, lived := w.run()
	endsAt(t, outcome, lived, end)
	w.expectPrevious("after grace", "")
	if runs != 2 {
		t.Errorf("%d activity runs, want 2", runs)
	}
}

// A second rotation with a shorter grace period signals the workflow, which
// re-reads the expiry and ends the new, earlier grace period on time
// instead of sleeping towards the first one's end.
func TestWebhookSecretWorkflowRereadsEarlierExpiry(t *testing.T) {
	w := newSecretWorkflow(t)
	w.rotate("second", 24*time.Hour)
	var end time.Duration
	w.env.RegisterDelayedCallback(func() {
		end = w.rotate("third", time.Hour)
		w.signal()
	}, 30*time.Minute)
	outcome, lived := w.run()
	endsAt(t, outcome, lived, end)
	w.expectPrevious("after grace", "")
}

// A second rotation with a later expiry: the first deadline erases nothing
// (the previous secret is now the second one, until its own end).
func TestWebhookSecretWorkflowRotationDuringGrace(t *testing.T) {
	w := newSecretWorkflow(t)
	first := w.rotate("second", time.Hour)
	var end time.Duration
	w.env.RegisterDelayedCallback(func() {
		end = w.rotate("third", 3*time.Hour)
		w.signal()
	}, 30*time.Minute)
	w.env.RegisterDelayedCallback(func() { w.expectPrevious("after the first deadline", "second") }, first+time.Minute)
	outcome, lived := w.run()
	endsAt(t, outcome, lived, end)
	w.expectPrevious("after grace", "")
}

// A rotation without grace during a grace period erases the previous
// secret itself; its signal ends the workflow at once.
func TestWebhookSecretWorkflowRotationWithoutGrace(t *testing.T) {
	w := newSecretWorkflow(t)
	w.rotate("second", time.Hour)
	w.env.RegisterDelayedCallback(func() {
		w.rotate("third", 0)
		w.signal()
	}, 10*time.Minute)
	outcome, lived := w.run()
	if outcome != workflows.WebhookSecretOutcomeIdle || lived != 10*time.Minute {
		t.Fatalf("outcome %q after %v, want idle at the rotation", outcome, lived)
	}
}

// A deleted subscription ends the workflow at its next wake-up.
func TestWebhookSecretWorkflowDeletedSubscription(t *testing.T) {
	w := newSecretWorkflow(t)
	end := w.rotate("second", time.Hour)
	w.env.RegisterDelayedCallback(func() {
		if err := w.st.Webhooks().Delete(context.Background(), w.ws, w.sub); err != nil {
			t.Fatal(err)
		}
	}, 10*time.Minute)
	outcome, lived := w.run()
	if outcome != workflows.WebhookSecretOutcomeDeleted || lived < end || lived > end+time.Minute {
		t.Fatalf("outcome %q after %v, want deleted at the end of grace (%v)", outcome, lived, end)
	}
}

// The rotation a start is made with (signal-with-start) is what the first
// read sees already: it wakes nothing.
func TestWebhookSecretWorkflowStartSignalWakesNothing(t *testing.T) {
	w := newSecretWorkflow(t)
	end := w.rotate("second", time.Hour)
	runs := 0
	w.env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { runs++ })
	w.env.RegisterDelayedCallback(w.signal, 0)
	outcome, lived := w.run()
	endsAt(t, outcome, lived, end)
	if runs != 2 {
		t.Errorf("%d activity runs, want 2 (start, end of grace)", runs)
	}
}

func TestWebhookSecretWorkflowContinuesAsNewWhenSuggested(t *testing.T) {
	w := newSecretWorkflow(t)
	w.rotate("second", time.Hour)
	runs := 0
	w.env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { runs++ })
	w.env.SetContinueAsNewSuggested(true)
	w.env.ExecuteWorkflow(workflows.WebhookSecret, &workflows.WebhookSecretInput{WorkspaceID: w.ws, SubscriptionID: w.sub})
	var can *workflow.ContinueAsNewError
	if err := w.env.GetWorkflowError(); !errors.As(err, &can) || can.WorkflowType.Name != "WebhookSecret" {
		t.Fatalf("workflow ended with %v, want continue-as-new as WebhookSecret", err)
	}
	if runs != 1 {
		t.Errorf("%d activity runs, want 1 before continuing", runs)
	}
}
