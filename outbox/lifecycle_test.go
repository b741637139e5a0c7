package outbox_test

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
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/outbox"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// fakeTemporal records the signals a relay sends. No workflow runs: a
// plain signal answers NotFound, as a server does for a workflow that has
// ended. down makes every call fail as an unreachable server.
type fakeTemporal struct {
	client.Client // calls nothing else; a nil embedded client panics if it did
	mu            sync.Mutex
	signalled     []string // workflow IDs plainly signalled
	started       []client.StartWorkflowOptions
	reasons       map[string]string // API keys' workflow ID → the change's reason
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
	if ch, ok := arg.(workflows.APIKeyChange); ok {
		f.reasons[id] = ch.Reason
	}
	return nil, nil
}

type lifecycleFixture struct {
	st      *store.Store
	owner   models.Principal
	tc      *fakeTemporal
	keys    outbox.Relay[store.KeyLifecycle]
	secrets outbox.Relay[store.LifecycleChange]
}

func newLifecycleFixture(t *testing.T) *lifecycleFixture {
	t.Helper()
	st := store.New(pgtest.NewDB(t))
	creds, err := st.Bootstrap(context.Background(), "Acme", "admin-"+uuid.NewString()[:8]+"@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	tc := &fakeTemporal{reasons: map[string]string{}}
	return &lifecycleFixture{
		st:      st,
		owner:   models.Principal{WorkspaceID: creds.WorkspaceID, UserID: creds.UserID, Role: models.RoleAdmin},
		tc:      tc,
		keys:    outbox.Relay[store.KeyLifecycle]{Queue: outbox.APIKeys{Deps: outbox.Deps{Temporal: tc, Store: st, TaskQueue: "q"}}},
		secrets: outbox.Relay[store.LifecycleChange]{Queue: outbox.WebhookSecrets{Deps: outbox.Deps{Temporal: tc, Store: st, TaskQueue: "q"}}},
	}
}

func (f *lifecycleFixture) create(t *testing.T, expiresAt *time.Time, at time.Time) uuid.UUID {
	t.Helper()
	k, err := f.st.APIKeys().Create(context.Background(), models.NewAPIKey{
		WorkspaceID: f.owner.WorkspaceID, UserID: f.owner.UserID, ExpiresAt: expiresAt, Now: at,
	})
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

func (f *lifecycleFixture) pending(t *testing.T, id uuid.UUID) bool {
	t.Helper()
	l, err := f.st.APIKeys().Lifecycle(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l.Pending
}

// The relay treats each pending key by its state: a key with a deadline
// gets its workflow signal-with-started; one revoked only signals a
// running workflow, and none running (NotFound) counts as told. Each is
// marked synced, and a second sweep finds nothing.
func TestAPIKeysRelayTellsPendingKeys(t *testing.T) {
	f := newLifecycleFixture(t)
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
	plain := f.create(t, nil, old) // no deadline: nothing to tell

	n, err := f.keys.Drain(ctx)
	if err != nil || n != 3 {
		t.Fatalf("drain: %d told (%v), want 3", n, err)
	}
	for _, id := range []uuid.UUID{expiring, rotated, revoked, plain} {
		if f.pending(t, id) {
			t.Errorf("key %s still pending after the drain", id)
		}
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

	if n, err := f.keys.Drain(ctx); err != nil || n != 0 {
		t.Errorf("second drain: %d told (%v), want nothing left", n, err)
	}
}

// With Temporal down a sweep fails, leaves every change pending and gives
// its claim back, so the next round (Temporal being back) delivers them.
func TestAPIKeysRelayWhileTemporalIsDown(t *testing.T) {
	f := newLifecycleFixture(t)
	ctx := context.Background()
	old := time.Now().Add(-time.Minute)
	exp := old.Add(time.Hour)
	a, b := f.create(t, &exp, old), f.create(t, &exp, old)

	f.tc.down = true
	if _, n, err := f.keys.Sweep(ctx); err == nil || n != 0 {
		t.Fatalf("sweep with Temporal down: %d told, error %v; want 0 and an error", n, err)
	}
	if !f.pending(t, a) || !f.pending(t, b) {
		t.Fatal("a change was marked synced though Temporal never took it")
	}

	f.tc.down = false
	if _, n, err := f.keys.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("sweep with Temporal back: %d told (%v), want both (claims released)", n, err)
	}
}

// A signing-secret rotation is pending until the relay has signal-started
// the subscription's WebhookSecret workflow; with Temporal down it stays
// pending, and a later rotation made while one is being told stays
// pending after it.
func TestWebhookSecretsRelayTellsRotations(t *testing.T) {
	f := newLifecycleFixture(t)
	ctx := context.Background()
	sub, err := f.st.Webhooks().Create(ctx, uuid.New(), models.NewWebhook{
		WorkspaceID: f.owner.WorkspaceID, CreatorID: f.owner.UserID, URL: "https://example.com/hook",
		EventTypes: []models.EventType{models.EventTestCreated}, Enabled: true,
	}, []byte{1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.secrets.Drain(ctx); err != nil || n != 0 {
		t.Fatalf("drain before any rotation: %d told (%v), want none", n, err)
	}
	rotate := func() {
		t.Helper()
		if _, err := f.st.Webhooks().RotateSecret(ctx, f.owner.WorkspaceID, sub.ID, []byte{2}, nil, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	rotate()

	f.tc.down = true
	if _, n, err := f.secrets.Sweep(ctx); err == nil || n != 0 {
		t.Fatalf("sweep with Temporal down: %d told, error %v; want 0 and an error", n, err)
	}
	f.tc.down = false
	claimed, err := f.st.Webhooks().ClaimUnsyncedSecrets(ctx, time.Minute, 10)
	if err != nil || len(claimed) != 1 || claimed[0].ID != sub.ID {
		t.Fatalf("claim after a failed sweep: %+v (%v), want the subscription again", claimed, err)
	}
	rotate() // a newer rotation while the first is being told
	if err := (outbox.WebhookSecrets{Deps: outbox.Deps{Temporal: f.tc, Store: f.st, TaskQueue: "q"}}).Sent(ctx, claimed); err != nil {
		t.Fatal(err)
	}
	if n, err := f.secrets.Drain(ctx); err != nil || n != 1 {
		t.Fatalf("drain: %d told (%v), want the newer rotation", n, err)
	}
	if len(f.tc.started) != 1 || f.tc.started[0].ID != workflows.WebhookSecretWorkflowID(sub.ID) {
		t.Fatalf("started %+v, want the subscription's secret workflow once", f.tc.started)
	}
	if n, err := f.secrets.Drain(ctx); err != nil || n != 0 {
		t.Errorf("second drain: %d told (%v), want nothing left", n, err)
	}
}
