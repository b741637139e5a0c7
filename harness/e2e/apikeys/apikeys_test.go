package apikeys_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// keys is the API keys path of the env's workspace, or a key's path under it.
func keys(env *testenv.Env, rest ...string) string {
	p := "/workspaces/" + env.WorkspaceID.String() + "/api-keys"
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// opens reports whether secret authenticates, through a real request.
func opens(t *testing.T, env *testenv.Env, secret string) bool {
	t.Helper()
	status, body := env.Do(t, http.MethodGet, keys(env), secret, nil)
	switch status {
	case http.StatusOK:
		return true
	case http.StatusUnauthorized:
		return false
	}
	t.Fatalf("authenticated request: %d %s", status, body)
	return false
}

// read fetches a key with the admin key.
func read(t *testing.T, env *testenv.Env, id uuid.UUID) models.APIKey {
	t.Helper()
	var k models.APIKey
	env.DoJSON(t, http.MethodGet, keys(env, id.String()), env.AdminKey, nil, http.StatusOK, &k)
	return k
}

// stored is the status column and whether a previous hash is kept: what
// only the workflow moves.
func stored(t *testing.T, env *testenv.Env, id uuid.UUID) (status string, previous bool) {
	t.Helper()
	err := env.DB.QueryRowContext(context.Background(),
		"SELECT status, previous_secret_hash IS NOT NULL FROM api_keys WHERE id = ?", id).Scan(&status, &previous)
	if err != nil {
		t.Fatal(err)
	}
	return status, previous
}

// eventuallyStored polls the row until the workflow has moved it.
func eventuallyStored(t *testing.T, env *testenv.Env, id uuid.UUID, wantStatus string) {
	t.Helper()
	var status string
	var previous bool
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status, previous = stored(t, env, id); status == wantStatus && !previous {
			return
		}
	}
	t.Fatalf("stored status %q (previous hash kept: %v), want %q and no previous hash: the workflow did not move it", status, previous, wantStatus)
}

// outcome waits for the key's workflow (which the outbox relay starts
// moments after the change) to end and returns why it did.
func outcome(t *testing.T, env *testenv.Env, id uuid.UUID) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for {
		_, err := env.Temporal.DescribeWorkflowExecution(ctx, workflows.APIKeyWorkflowID(id), "")
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no workflow for key %s: %v", id, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var res workflows.APIKeyResult
	if err := env.Temporal.GetWorkflow(ctx, workflows.APIKeyWorkflowID(id), "").Get(ctx, &res); err != nil {
		t.Fatalf("workflow of key %s: %v", id, err)
	}
	return res.Outcome
}

// checkMemo waits for the key's workflow, which the worker's outbox relay
// starts moments after the change, and requires its memo to name the
// workspace and key, and nothing else (no secret).
func checkMemo(t *testing.T, env *testenv.Env, id uuid.UUID) {
	t.Helper()
	var desc *workflowservice.DescribeWorkflowExecutionResponse
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		desc, err = env.Temporal.DescribeWorkflowExecution(context.Background(), workflows.APIKeyWorkflowID(id), "")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe the key's workflow: %v", err)
		}
	}
	fields := desc.GetWorkflowExecutionInfo().GetMemo().GetFields()
	want := map[string]string{"workspaceId": env.WorkspaceID.String(), "keyId": id.String()}
	if len(fields) != len(want) {
		t.Errorf("memo has %d fields, want exactly %v", len(fields), want)
	}
	for name, v := range want {
		var got string
		if p, ok := fields[name]; !ok {
			t.Errorf("memo lacks %s", name)
		} else if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err != nil || got != v {
			t.Errorf("memo %s = %q (%v), want %q", name, got, err, v)
		}
	}
}

// Create, authenticate, rotate with two seconds of grace: both secrets work,
// then only the new one, the key reads active, and the workflow has erased
// the old hash and moved the stored status.
func TestAPIKeyRotationWithGrace(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	var k models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey, map[string]any{"name": "e2e"}, http.StatusCreated, &k)
	if !opens(t, env, k.Secret) {
		t.Fatal("the new key does not authenticate")
	}

	var r models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), k.Secret,
		map[string]any{"gracePeriodSeconds": 2}, http.StatusOK, &r)
	rotated := time.Now()
	if r.Status != models.KeyRotating || r.Secret == k.Secret || r.ID != k.ID {
		t.Fatalf("rotated key %+v", r)
	}
	checkMemo(t, env, k.ID)
	if !opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("during grace both secrets must work")
	}
	if status, previous := stored(t, env, k.ID); status != "rotating" || !previous {
		t.Fatalf("stored during grace: %q (previous kept: %v)", status, previous)
	}

	time.Sleep(time.Until(rotated.Add(3 * time.Second)))
	if opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("after grace only the new secret may work")
	}
	if got := read(t, env, k.ID); got.Status != models.KeyActive || got.PreviousKeyExpiresAt != nil {
		t.Fatalf("after grace the key reads %s (previousKeyExpiresAt %v)", got.Status, got.PreviousKeyExpiresAt)
	}
	eventuallyStored(t, env, k.ID, "active")
	if o := outcome(t, env, k.ID); o != workflows.APIKeyOutcomeIdle {
		t.Fatalf("workflow ended %q, want idle", o)
	}
	replay(t, env, k.ID)
}

// replay runs the key's recorded history through today's workflow code: a
// non-deterministic change to the workflow fails here.
func replay(t *testing.T, env *testenv.Env, id uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	iter := env.Temporal.GetWorkflowHistory(ctx, workflows.APIKeyWorkflowID(id), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflow(workflows.APIKey)
	if err := r.ReplayWorkflowHistory(nil, &h); err != nil {
		t.Fatalf("replaying the history of %d events: %v", len(h.Events), err)
	}
}

// A key made to expire in two seconds is refused after three, reads
// expired, is stored expired by its workflow, and cannot be rotated.
func TestAPIKeyExpiry(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	created := time.Now()
	var k models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey,
		map[string]any{"expiresAt": created.Add(2 * time.Second).UTC().Format(time.RFC3339Nano)}, http.StatusCreated, &k)
	checkMemo(t, env, k.ID)
	if !opens(t, env, k.Secret) {
		t.Fatal("the key does not authenticate before its expiry")
	}

	time.Sleep(time.Until(created.Add(3 * time.Second)))
	if opens(t, env, k.Secret) {
		t.Fatal("the key authenticates after its expiry")
	}
	if got := read(t, env, k.ID); got.Status != models.KeyExpired {
		t.Fatalf("after its expiry the key reads %s", got.Status)
	}
	eventuallyStored(t, env, k.ID, "expired")
	if o := outcome(t, env, k.ID); o != workflows.APIKeyOutcomeExpired {
		t.Fatalf("workflow ended %q, want expired", o)
	}

	status, body := env.Do(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), env.AdminKey, map[string]any{"gracePeriodSeconds": 60})
	if status != http.StatusConflict || !strings.Contains(string(body), `"code":"api_key_expired"`) {
		t.Fatalf("rotating an expired key: %d %s", status, body)
	}
}

// Deleting a key during a grace period stops both secrets at once and ends
// its workflow.
func TestAPIKeyDeleteStopsBothSecrets(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	var k, r models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey, nil, http.StatusCreated, &k)
	env.DoJSON(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), env.AdminKey,
		map[string]any{"gracePeriodHours": 1}, http.StatusOK, &r)
	if !opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("during grace both secrets must work")
	}
	env.DoJSON(t, http.MethodDelete, keys(env, k.ID.String()), env.AdminKey, nil, http.StatusNoContent, nil)
	if opens(t, env, k.Secret) || opens(t, env, r.Secret) {
		t.Fatal("a deleted key's secrets still work")
	}
	env.DoJSON(t, http.MethodGet, keys(env, k.ID.String()), env.AdminKey, nil, http.StatusNotFound, nil)
	// The relay may reach the key only after its revocation, when there is
	// nothing left for a workflow to do and none is started; a workflow
	// the rotation started ends revoked.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l, err := env.Store.APIKeys().Lifecycle(context.Background(), k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !l.Pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key's changes are still pending in the outbox")
		}
	}
	_, err := env.Temporal.DescribeWorkflowExecution(context.Background(), workflows.APIKeyWorkflowID(k.ID), "")
	if nf := (*serviceerror.NotFound)(nil); errors.As(err, &nf) {
		t.Log("the relay told the key's workflow after the revocation: none started")
		return
	}
	if o := outcome(t, env, k.ID); o != workflows.APIKeyOutcomeRevoked {
		t.Fatalf("workflow ended %q, want revoked", o)
	}
}

// With the worker stopped nothing moves the stored state, yet a secret
// whose instant has passed is refused: authentication reads the timestamps.
func TestAPIKeyDeadlinesHoldWithoutWorker(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	env.StopWorker()
	start := time.Now()
	var expiring, k, r models.APIKey
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey,
		map[string]any{"expiresAt": start.Add(2 * time.Second).UTC().Format(time.RFC3339Nano)}, http.StatusCreated, &expiring)
	env.DoJSON(t, http.MethodPost, keys(env), env.AdminKey, nil, http.StatusCreated, &k)
	env.DoJSON(t, http.MethodPost, keys(env, k.ID.String(), "rotate"), env.AdminKey,
		map[string]any{"gracePeriodSeconds": 2}, http.StatusOK, &r)
	if !opens(t, env, expiring.Secret) || !opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("every secret must work before its instant")
	}

	time.Sleep(time.Until(start.Add(3 * time.Second)))
	if opens(t, env, expiring.Secret) {
		t.Fatal("an expired key authenticates with the worker stopped")
	}
	if opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("after grace only the new secret may work, worker or not")
	}
	if got := read(t, env, expiring.ID); got.Status != models.KeyExpired {
		t.Fatalf("the expired key reads %s", got.Status)
	}
	if got := read(t, env, k.ID); got.Status != models.KeyActive {
		t.Fatalf("the rotated key reads %s after grace", got.Status)
	}
	// Proof that no worker helped: the stored state has not moved.
	if status, _ := stored(t, env, expiring.ID); status != "active" {
		t.Fatalf("stored status of the expired key is %q: something ran the workflow", status)
	}
	if status, previous := stored(t, env, k.ID); status != "rotating" || !previous {
		t.Fatalf("stored status of the rotated key is %q (previous kept: %v): something ran the workflow", status, previous)
	}
}
