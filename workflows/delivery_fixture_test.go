package workflows_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/deliverytest"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// The default schedule: attempts at 0, ~5s, ~5m5s, ~35m5s.
var defaultSchedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}

// deliveryFixture runs the delivery workflow in the test environment (time
// skipping) with the real activities, on a real database, against real
// HTTP receivers on loopback (the shared harness/deliverytest fixture).
type deliveryFixture struct{ *deliverytest.Fixture }

func newDeliveryFixture(t *testing.T) *deliveryFixture {
	t.Helper()
	f := &deliveryFixture{deliverytest.New(t, true)}
	// A dead endpoint should cost the test one second, not ten.
	f.Acts.WebhookClient.Transport.(*http.Transport).ResponseHeaderTimeout = time.Second
	return f
}

func (f *deliveryFixture) publish(t *testing.T) models.Event {
	t.Helper()
	return f.Publish(t, `{"status":"passing"}`)
}

// newEnv is a test workflow environment with the production registrations.
func (f *deliveryFixture) newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	worker.Register(env, f.Acts)
	return env
}

// run delivers ev to the recipients fixed when it was stored, as the outbox
// starts it, and returns the result and the virtual time it took.
func (f *deliveryFixture) run(t *testing.T, env *testsuite.TestWorkflowEnvironment, ev models.Event, schedule []time.Duration) (*workflows.DeliveryResult, time.Duration) {
	t.Helper()
	return f.runInput(t, env, &workflows.DeliveryInput{EventID: ev.ID, Schedule: activities.Durations(schedule), Recipients: ev.Recipients})
}

func (f *deliveryFixture) runInput(t *testing.T, env *testsuite.TestWorkflowEnvironment, in *workflows.DeliveryInput) (*workflows.DeliveryResult, time.Duration) {
	t.Helper()
	start := env.Now()
	env.ExecuteWorkflow(workflows.DeliveryWorkflow, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow failed: %v", err)
	}
	var res workflows.DeliveryResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return &res, env.Now().Sub(start)
}

// newReceiver answers the n-th request (from 1) with statuses[n-1], or
// the last status once the list runs out.
func newReceiver(t *testing.T, statuses ...int) *deliverytest.Receiver {
	return deliverytest.NewReceiver(t, deliverytest.Answering(statuses...))
}

func checkAttempts(t *testing.T, recs []models.WebhookDelivery, want ...int) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, r := range recs {
		if r.AttemptNumber != i+1 {
			t.Errorf("record %d has attempt number %d", i, r.AttemptNumber)
		}
		switch {
		case want[i] == 0 && r.StatusCode != nil:
			t.Errorf("attempt %d: status %d, want none", i+1, *r.StatusCode)
		case want[i] != 0 && (r.StatusCode == nil || *r.StatusCode != want[i]):
			t.Errorf("attempt %d: status %v, want %d", i+1, r.StatusCode, want[i])
		}
		if success := want[i] >= 200 && want[i] < 300; r.Success != success || (r.ErrorMessage == nil) != success {
			t.Errorf("attempt %d: success %v, error %v", i+1, r.Success, r.ErrorMessage)
		}
	}
}

// afterFirstAttempt runs change once the first attempt has completed, before
// the workflow goes on to wait for the second. Attempt 1 is a local
// activity (or, after a local failure, a regular one).
func afterFirstAttempt(env *testsuite.TestWorkflowEnvironment, change func()) {
	var once sync.Once
	done := func(_ *activity.Info, _ converter.EncodedValue, err error) {
		if err == nil {
			once.Do(change)
		}
	}
	env.SetOnActivityCompletedListener(done)
	env.SetOnLocalActivityCompletedListener(done)
}

// attemptsSeen lists the attempts started, as "local 1", "activity 2", …
type attemptsSeen struct {
	mu  sync.Mutex
	got []string
}

func watchAttempts(env *testsuite.TestWorkflowEnvironment) *attemptsSeen {
	w := &attemptsSeen{}
	env.SetOnLocalActivityStartedListener(func(_ *activity.Info, _ context.Context, args []any) {
		w.add("local", args[0].(*activities.AttemptInput).AttemptNumber)
	})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name != "AttemptDelivery" {
			return
		}
		var in activities.AttemptInput
		if err := args.Get(&in); err != nil {
			panic(err)
		}
		w.add("activity", in.AttemptNumber)
	})
	return w
}

func (w *attemptsSeen) add(kind string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, kind+" "+strconv.Itoa(n))
}

func (w *attemptsSeen) check(t *testing.T, want ...string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !slices.Equal(w.got, want) {
		t.Fatalf("attempts started: %q, want %q", w.got, want)
	}
}
