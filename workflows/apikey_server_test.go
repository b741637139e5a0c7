package workflows_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/activities"
	"github.com/openlayer-ai/workspace-service/harness/devtemporal"
	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/searchattr"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/worker"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// keyServer is a key on a real database whose workflows run on a real
// Temporal server, with a worker on c's namespace.
type keyServer struct {
	c     client.Client
	st    *store.Store
	ws    store.Credentials
	queue string
}

func newKeyServer(t *testing.T, c client.Client) *keyServer {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	ws, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	k := &keyServer{c: c, st: st, ws: ws, queue: "keys-" + uuid.NewString()[:8]}
	w := sdkworker.New(c, k.queue, sdkworker.Options{})
	worker.Register(w, &activities.Activities{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return k
}

func (k *keyServer) createKey(t *testing.T, expiresIn time.Duration) uuid.UUID {
	t.Helper()
	now := time.Now()
	exp := now.Add(expiresIn)
	key, err := k.st.APIKeys().Create(context.Background(), models.NewAPIKey{
		WorkspaceID: k.ws.WorkspaceID, UserID: k.ws.UserID, ExpiresAt: &exp, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return key.ID
}

// On a namespace without our search attributes (Temporal Cloud, where
// workers may not register them, or one made by hand), a key's change
// still reaches its workflow: the start falls back to one without them,
// as a delivery's does, instead of failing with InvalidArgument on every
// round while the change waits in its outbox, and says so for
// the caller to log. The key expires on time.
func TestAPIKeyWithoutSearchAttributesInTheNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devtemporal.Start(devtemporal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	k := newKeyServer(t, bareNamespace(ctx, t, srv.Addr(), "bare-keys"))
	id := k.createKey(t, 2*time.Second)

	change := workflows.APIKeyChange{Reason: workflows.APIKeyCreated}
	bare, err := workflows.SignalWithStartAPIKey(ctx, k.c, k.ws.WorkspaceID, id, k.queue, change)
	if err != nil {
		t.Fatalf("start refused, the change would wait in the outbox forever: %v", err)
	}
	if !bare {
		t.Error("SignalWithStartAPIKey did not report its start without search attributes: the outbox relay would not log it")
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	var res workflows.APIKeyResult
	if err := k.c.GetWorkflow(wctx, workflows.APIKeyWorkflowID(id), "").Get(wctx, &res); err != nil || res.Outcome != workflows.APIKeyOutcomeExpired {
		t.Fatalf("workflow result %+v, %v; want expired", res, err)
	}
	var status string
	if err := k.st.DB().NewRaw(`SELECT status FROM api_keys WHERE id = ?`, id).Scan(ctx, &status); err != nil || status != string(models.KeyExpired) {
		t.Errorf("stored status %q (%v), want expired", status, err)
	}
	desc, err := k.c.DescribeWorkflow(ctx, workflows.APIKeyWorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := desc.TypedSearchAttributes.GetKeyword(searchattr.APIKeyID); ok {
		t.Error("ApiKeyId set in a namespace that does not define it")
	}
	if s, err := desc.GetStaticSummary(); err != nil || s == "" {
		t.Errorf("summary %q, %v: the fallback start must keep it", s, err)
	}
}

// A key's workflow continues as new after DeadlineTimerStepsPerRun wake-ups,
// and the run after that has no static summary (the SDK's continue-as-new
// takes none); its current details, which the Web UI shows on the
// workflow's page, carry the same line on every run.
func TestAPIKeyDetailsAfterContinueAsNew(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := devtemporal.Start(devtemporal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := newKeyServer(t, c)
	id := k.createKey(t, time.Hour)
	wid := workflows.APIKeyWorkflowID(id)
	change := workflows.APIKeyChange{Reason: workflows.APIKeyCreated}
	if bare, err := workflows.SignalWithStartAPIKey(ctx, c, k.ws.WorkspaceID, id, k.queue, change); err != nil || bare {
		t.Fatalf("started without search attributes %v, error %v", bare, err)
	}
	first, _ := waitIdle(ctx, t, c, wid, "", 0)

	// One wake-up per signal, each taken alone, until the run continues.
	var length int64
	second := first
	for i := 0; second == first; i++ {
		if i > 2*workflows.DeadlineTimerStepsPerRun {
			t.Fatalf("no continue-as-new after %d signals", i)
		}
		if err := c.SignalWorkflow(ctx, wid, "", workflows.APIKeyChangedSignal, change); err != nil {
			t.Fatal(err)
		}
		second, length = waitIdle(ctx, t, c, wid, first, length)
	}

	want := "Lifecycle of API key " + id.String() + " (workspace " + k.ws.WorkspaceID.String() + ")"
	for _, run := range []string{first, second} {
		if got := currentDetails(ctx, t, c, wid, run); got != want {
			t.Errorf("run %s: current details %q, want %q", run, got, want)
		}
	}
	summaries := map[string]string{}
	for _, run := range []string{first, second} {
		desc, err := c.DescribeWorkflow(ctx, wid, run)
		if err != nil {
			t.Fatal(err)
		}
		summaries[run], _ = desc.GetStaticSummary()
	}
	if summaries[first] != want || summaries[second] != "" {
		t.Errorf("static summaries: first run %q, continued run %q; want %q and none (if the continued run has one now, docs/operations.md can say so)",
			summaries[first], summaries[second], want)
	}
	_ = c.TerminateWorkflow(ctx, wid, "", "test over")
}

// waitIdle waits until the current run of wid has taken everything sent
// to it: no workflow task or activity pending, and a history longer than
// after. It returns the run's id (a run other than run: it continued as
// new, and then it returns as soon as that run exists) and its length.
func waitIdle(ctx context.Context, t *testing.T, c client.Client, wid, run string, after int64) (string, int64) {
	t.Helper()
	for {
		d, err := c.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil {
			t.Fatal(err)
		}
		info := d.GetWorkflowExecutionInfo()
		cur := info.GetExecution().GetRunId()
		if run != "" && cur != run {
			return cur, 0
		}
		if info.GetHistoryLength() > after && d.GetPendingWorkflowTask() == nil && len(d.GetPendingActivities()) == 0 {
			return cur, info.GetHistoryLength()
		}
		if ctx.Err() != nil {
			t.Fatalf("workflow %s never idle: %v", wid, ctx.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// currentDetails asks run of wid for its metadata, as the Web UI does.
func currentDetails(ctx context.Context, t *testing.T, c client.Client, wid, run string) string {
	t.Helper()
	v, err := c.QueryWorkflow(ctx, wid, run, "__temporal_workflow_metadata")
	if err != nil {
		t.Fatal(err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		t.Fatal(err)
	}
	return md.GetCurrentDetails()
}
