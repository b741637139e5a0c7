package workflows_test

import (
	"bytes"
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
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// keyWorkflow runs the APIKey workflow with time skipping against the real
// activities on a fresh database. The activities read the test
// environment's clock, so deadlines the workflow sleeps towards are due
// when the activity runs, exactly as with a real server and worker.
type keyWorkflow struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	st    *store.Store
	owner models.Principal
	t0    time.Time
	key   models.APIKey
	runs  int // activity executions
}

func newKeyWorkflow(t *testing.T, expiresIn time.Duration) *keyWorkflow {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	creds, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	w := &keyWorkflow{
		t: t, env: env, st: st,
		owner: models.Principal{WorkspaceID: creds.WorkspaceID, UserID: creds.UserID, Role: models.RoleAdmin},
		t0:    time.Now().UTC().Truncate(time.Second),
	}
	env.SetStartTime(w.t0)
	worker.Register(env, &activities.Activities{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: env.Now})
	env.SetOnActivityCompletedListener(func(*activity.Info, converter.EncodedValue, error) { w.runs++ })
	in := models.NewAPIKey{WorkspaceID: creds.WorkspaceID, UserID: creds.UserID, Now: w.t0}
	if expiresIn > 0 {
		exp := w.t0.Add(expiresIn)
		in.ExpiresAt = &exp
	}
	if w.key, err = st.APIKeys().Create(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return w
}

// rotate rotates the key at the environment's current time.
func (w *keyWorkflow) rotate(grace time.Duration) models.APIKey {
	w.t.Helper()
	k, err := w.st.APIKeys().Rotate(context.Background(), w.owner, w.key.ID, models.APIKeyRotation{Grace: grace, Now: w.env.Now()})
	if err != nil {
		w.t.Fatal(err)
	}
	return k
}

func (w *keyWorkflow) signal(reason string) {
	w.env.SignalWorkflow(workflows.APIKeyChangedSignal, workflows.APIKeyChange{Reason: reason})
}

// at runs f once the workflow's clock reaches t0+d.
func (w *keyWorkflow) at(d time.Duration, f func()) {
	w.env.RegisterDelayedCallback(f, d)
}

// run executes the workflow to its end and returns its outcome and how long
// it lived in workflow time.
func (w *keyWorkflow) run() (string, time.Duration) {
	w.t.Helper()
	w.env.ExecuteWorkflow(workflows.APIKey, &workflows.APIKeyInput{WorkspaceID: w.owner.WorkspaceID, KeyID: w.key.ID})
	if !w.env.IsWorkflowCompleted() {
		w.t.Fatal("the workflow did not complete")
	}
	if err := w.env.GetWorkflowError(); err != nil {
		w.t.Fatalf("workflow failed: %v", err)
	}
	var res workflows.APIKeyResult
	if err := w.env.GetWorkflowResult(&res); err != nil {
		w.t.Fatal(err)
	}
	return res.Outcome, w.env.Now().Sub(w.t0)
}

// stored reads the columns the workflow moves.
func (w *keyWorkflow) stored() (status string, previous []byte) {
	w.t.Helper()
	err := w.st.DB().NewRaw(`SELECT status, previous_secret_hash FROM api_keys WHERE id = ?`, w.key.ID).
		Scan(context.Background(), &status, &previous)
	if err != nil {
		w.t.Fatal(err)
	}
	return status, previous
}

func (w *keyWorkflow) expectStored(when, wantStatus string, wantPrevious string) {
	w.t.Helper()
	status, previous := w.stored()
	var want []byte
	if wantPrevious != "" {
		want = secret.HashAPIKey(wantPrevious)
	}
	if status != wantStatus {
		w.t.Errorf("%s: stored status %q, want %q", when, status, wantStatus)
	}
	switch {
	case want == nil && previous != nil:
		w.t.Errorf("%s: a previous secret hash is still stored", when)
	case want != nil && !bytes.Equal(previous, want):
		w.t.Errorf("%s: the stored previous hash is not the expected secret's (set: %v)", when, previous != nil)
	}
}

func TestAPIKeyWorkflowEndsGraceAtItsDeadline(t *testing.T) {
	w := newKeyWorkflow(t, 0)
	w.rotate(time.Hour)
	w.at(59*time.Minute, func() { w.expectStored("during grace", "rotating", w.key.Secret) })
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeIdle || lived < time.Hour || lived > time.Hour+time.Minute {
		t.Fatalf("outcome %q after %v, want idle right after the hour of grace", outcome, lived)
	}
	w.expectStored("after grace", "active", "")
	if w.runs != 2 {
		t.Errorf("%d activity runs, want 2 (start, end of grace)", w.runs)
	}
}

func TestAPIKeyWorkflowRotationDuringGrace(t *testing.T) {
	w := newKeyWorkflow(t, 0)
	first := w.rotate(time.Hour)
	w.at(30*time.Minute, func() {
		w.rotate(time.Hour)
		w.signal(workflows.APIKeyRotated)
	})
	// The first grace period's deadline no longer matters: the previous
	// secret is now the first rotation's, until 1h30.
	w.at(61*time.Minute, func() { w.expectStored("after the first deadline", "rotating", first.Secret) })
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeIdle || lived < 90*time.Minute || lived > 91*time.Minute {
		t.Fatalf("outcome %q after %v, want idle at the second rotation's end of grace", outcome, lived)
	}
	w.expectStored("after grace", "active", "")
}

func TestAPIKeyWorkflowRevokeDuringGrace(t *testing.T) {
	w := newKeyWorkflow(t, 2*time.Hour)
	w.rotate(time.Hour)
	w.at(10*time.Minute, func() {
		if err := w.st.APIKeys().Revoke(context.Background(), w.owner, w.key.ID, w.env.Now()); err != nil {
			t.Fatal(err)
		}
		w.signal(workflows.APIKeyRevoked)
	})
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeRevoked || lived != 10*time.Minute {
		t.Fatalf("outcome %q after %v, want revoked at once", outcome, lived)
	}
	w.expectStored("after revoke", "rotating", "")
	if w.runs != 2 {
		t.Errorf("%d activity runs, want 2 (start, the read the revocation's signal wakes)", w.runs)
	}
}

// A signal only wakes the workflow: the read it makes is the truth, so a
// signal saying "revoked" of a key that is not does not end the run.
func TestAPIKeyWorkflowSignalOnlyWakes(t *testing.T) {
	w := newKeyWorkflow(t, time.Hour)
	w.at(10*time.Minute, func() { w.signal(workflows.APIKeyRevoked) })
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeExpired || lived < time.Hour || lived > time.Hour+time.Minute {
		t.Fatalf("outcome %q after %v, want expired at the expiry", outcome, lived)
	}
	if w.runs != 3 {
		t.Errorf("%d activity runs, want 3 (start, the signal, the expiry)", w.runs)
	}
}

// The signal a start is made with (signal-with-start) is what the first
// read sees already: it wakes nothing.
func TestAPIKeyWorkflowStartSignalWakesNothing(t *testing.T) {
	w := newKeyWorkflow(t, time.Hour)
	w.at(0, func() { w.signal(workflows.APIKeyCreated) })
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeExpired || lived < time.Hour || lived > time.Hour+time.Minute {
		t.Fatalf("outcome %q after %v, want expired at the expiry", outcome, lived)
	}
	if w.runs != 2 {
		t.Errorf("%d activity runs, want 2 (start, expiry)", w.runs)
	}
}

func TestAPIKeyWorkflowExpiryBeforeEndOfGrace(t *testing.T) {
	w := newKeyWorkflow(t, 30*time.Minute)
	r := w.rotate(time.Hour)
	if !r.PreviousKeyExpiresAt.Equal(*r.ExpiresAt) {
		t.Fatalf("grace must be capped by the expiry: previousKeyExpiresAt %v, expiresAt %v", r.PreviousKeyExpiresAt, r.ExpiresAt)
	}
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeExpired || lived < 30*time.Minute || lived > 31*time.Minute {
		t.Fatalf("outcome %q after %v, want expired at the expiry", outcome, lived)
	}
	w.expectStored("after expiry", "expired", "")
}

func TestAPIKeyWorkflowExpiry(t *testing.T) {
	w := newKeyWorkflow(t, 48*time.Hour)
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeExpired || lived < 48*time.Hour || lived > 48*time.Hour+time.Minute {
		t.Fatalf("outcome %q after %v, want expired at the expiry", outcome, lived)
	}
	w.expectStored("after expiry", "expired", "")
}

func TestAPIKeyWorkflowWithoutDeadlineEndsAtOnce(t *testing.T) {
	w := newKeyWorkflow(t, 0)
	outcome, lived := w.run()
	if outcome != workflows.APIKeyOutcomeIdle || lived != 0 {
		t.Fatalf("outcome %q after %v, want idle at once", outcome, lived)
	}
}

// continuedAsNew runs the workflow and requires it to continue as new.
func (w *keyWorkflow) continuedAsNew() {
	w.t.Helper()
	w.env.ExecuteWorkflow(workflows.APIKey, &workflows.APIKeyInput{WorkspaceID: w.owner.WorkspaceID, KeyID: w.key.ID})
	var can *workflow.ContinueAsNewError
	if err := w.env.GetWorkflowError(); !errors.As(err, &can) {
		w.t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	if can.WorkflowType.Name != "APIKey" {
		w.t.Fatalf("continued as %q, want APIKey", can.WorkflowType.Name)
	}
}

func TestAPIKeyWorkflowContinuesAsNewWhenSuggested(t *testing.T) {
	w := newKeyWorkflow(t, time.Hour)
	w.env.SetContinueAsNewSuggested(true)
	w.continuedAsNew()
	if w.runs != 1 {
		t.Errorf("%d activity runs, want 1 before continuing", w.runs)
	}
}

func TestAPIKeyWorkflowContinuesAsNewAfterManySteps(t *testing.T) {
	w := newKeyWorkflow(t, 24*time.Hour)
	for i := 1; i <= workflows.DeadlineTimerStepsPerRun+10; i++ {
		w.at(time.Duration(i)*time.Minute, func() { w.signal(workflows.APIKeyRotated) })
	}
	w.continuedAsNew()
	if w.runs != workflows.DeadlineTimerStepsPerRun {
		t.Errorf("%d activity runs, want %d before continuing", w.runs, workflows.DeadlineTimerStepsPerRun)
	}
	if lived := w.env.Now().Sub(w.t0); lived >= 24*time.Hour {
		t.Errorf("continued after %v, want long before the expiry", lived)
	}
}
