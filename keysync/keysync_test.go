package keysync_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/keysync"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fakeTemporal records the signals the notifier sends. No workflow runs:
// a plain signal answers NotFound, as a server does for a key whose
// workflow has ended. down makes every call fail as an unreachable server.
type fakeTemporal struct {
	client.Client // calls nothing else; a nil embedded client panics if it did
	mu            sync.Mutex
	signalled     []string // workflow IDs plainly signalled
	started       []client.StartWorkflowOptions
	reasons       map[string]string
	down          bool
}

func (f *fakeTemporal) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return serviceerror.NewUnavailable("connection refused")
	}
	f.signalled = append(f.signalled, id)
	f.reasons[id] = arg.(workflows.APIKeyChange).Reason
	return serviceerror.NewNotFound("workflow not found")
}

func (f *fakeTemporal) SignalWithStartWorkflow(_ context.Context, id, name string, arg any,
	opts client.StartWorkflowOptions, _ any, _ ...any,
) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, serviceerror.NewUnavailable("connection refused")
	}
	if opts.ID != "" && opts.ID != id {
		return nil, errors.New("options name another workflow")
	}
	f.started = append(f.started, opts)
	f.reasons[id] = arg.(workflows.APIKeyChange).Reason
	return nil, nil
}

type fixture struct {
	st    *store.Store
	owner models.Principal
	tc    *fakeTemporal
	n     keysync.Notifier
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	creds, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	tc := &fakeTemporal{reasons: map[string]string{}}
	return &fixture{
		st:    st,
		owner: models.Principal{WorkspaceID: creds.WorkspaceID, UserID: creds.UserID, Role: models.RoleAdmin},
		tc:    tc,
		n:     keysync.Notifier{Temporal: tc, Store: st, TaskQueue: "q"},
	}
}

func (f *fixture) create(t *testing.T, expiresAt *time.Time, at time.Time) uuid.UUID {
	t.Helper()
	k, err := f.st.APIKeys().Create(context.Background(), models.NewAPIKey{
		WorkspaceID: f.owner.WorkspaceID, UserID: f.owner.UserID, ExpiresAt: expiresAt, Now: at,
	})
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func (f *fixture) pending(t *testing.T, id uuid.UUID) bool {
	t.Helper()
	l, err := f.st.APIKeys().Lifecycle(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l.Pending
}

// The reconciler treats each pending key as the API would: a key with a
// deadline gets its workflow signal-with-started; one without, or revoked,
// only signals a running workflow, and none running (NotFound) counts as
// delivered. Each is marked synced; a change too recent is left to the API.
func TestSweepNotifiesPendingKeys(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := time.Now().Add(-time.Minute)
	exp := old.Add(time.Hour)

	expiring := f.create(t, &exp, old)
	rotated := f.create(t, nil, old)
	if _, err := f.st.APIKeys().Rotate(ctx, f.owner, rotated, models.APIKeyRotation{Grace: time.Hour, Now: old}); err != nil {
		t.Fatal(err)
	}
	revoked := f.create(t, &exp, old)
	if err := f.st.APIKeys().Revoke(ctx, f.owner, revoked, old); err != nil {
		t.Fatal(err)
	}
	recent := f.create(t, &exp, time.Now())

	n, err := f.n.Sweep(ctx, 10*time.Second)
	if err != nil || n != 3 {
		t.Fatalf("sweep: %d notified (%v), want 3", n, err)
	}
	for _, id := range []uuid.UUID{expiring, rotated, revoked} {
		if f.pending(t, id) {
			t.Errorf("key %s still pending after the sweep", id)
		}
	}
	if !f.pending(t, recent) {
		t.Error("the recently changed key was taken from the API")
	}
	if len(f.tc.started) != 2 || len(f.tc.signalled) != 1 || f.tc.signalled[0] != workflows.APIKeyWorkflowID(revoked) {
		t.Fatalf("started %d and signalled %v, want the two keys with deadlines started and the revoked one signalled", len(f.tc.started), f.tc.signalled)
	}
	for _, o := range f.tc.started {
		if o.TaskQueue != "q" || o.Memo["workspaceId"] != f.owner.WorkspaceID.String() {
			t.Errorf("start options %+v", o)
		}
	}
	want := map[uuid.UUID]string{expiring: workflows.APIKeyCreated, rotated: workflows.APIKeyRotated, revoked: workflows.APIKeyRevoked}
	for id, reason := range want {
		if got := f.tc.reasons[workflows.APIKeyWorkflowID(id)]; got != reason {
			t.Errorf("key %s signalled %q, want %q", id, got, reason)
		}
	}

	if n, err := f.n.Sweep(ctx, 10*time.Second); err != nil || n != 0 {
		t.Errorf("second sweep: %d notified (%v), want nothing left", n, err)
	}
}

// With Temporal down a sweep fails, leaves every change pending and gives
// its claim back, so the next round (Temporal being back) delivers them.
func TestSweepWhileTemporalIsDown(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	old := time.Now().Add(-time.Minute)
	exp := old.Add(time.Hour)
	a, b := f.create(t, &exp, old), f.create(t, &exp, old)

	f.tc.down = true
	if n, err := f.n.Sweep(ctx, time.Second); err == nil || n != 0 {
		t.Fatalf("sweep with Temporal down: %d notified, error %v; want 0 and an error", n, err)
	}
	if !f.pending(t, a) || !f.pending(t, b) {
		t.Fatal("a change was marked synced though Temporal never took it")
	}
	if err := f.n.Notify(ctx, a); err == nil || !f.pending(t, a) {
		t.Fatalf("Notify with Temporal down: %v, pending %v; want an error and still pending", err, f.pending(t, a))
	}

	f.tc.down = false
	if n, err := f.n.Sweep(ctx, time.Second); err != nil || n != 2 {
		t.Fatalf("sweep with Temporal back: %d notified (%v), want both (claims released)", n, err)
	}
}

// The API's path: Notify reads the key and marks its change synced; a key
// that is gone needs nothing.
func TestNotify(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	id := f.create(t, &exp, time.Now())
	if err := f.n.Notify(ctx, id); err != nil || f.pending(t, id) || len(f.tc.started) != 1 {
		t.Fatalf("Notify: %v, pending %v, %d starts; want one start and nothing pending", err, f.pending(t, id), len(f.tc.started))
	}
	if err := f.n.Notify(ctx, uuid.New()); err != nil {
		t.Errorf("Notify of a key that is gone: %v", err)
	}
}
