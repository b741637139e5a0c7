package apikeys_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A rotation made through an API that cannot reach Temporal reaches the
// key's workflow all the same: the API only records the change in the
// key's row, the worker's outbox relay starts the workflow, and the
// workflow erases the previous hash after the grace period and moves the
// stored status.
func TestAPIKeyRotationDuringTemporalOutage(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t) // its worker reaches Temporal
	cut := env.StartAPI(t, func(c *config.Config) { c.TemporalAddress = closedAddr(t) })
	ctx := context.Background()

	var k, r models.APIKey
	cut.DoJSON(t, http.MethodPost, keys(cut), cut.AdminKey, map[string]any{"name": "outage"}, http.StatusCreated, &k)
	cut.DoJSON(t, http.MethodPost, keys(cut, k.ID.String(), "rotate"), cut.AdminKey,
		map[string]any{"gracePeriodSeconds": 3}, http.StatusOK, &r)
	rotated := time.Now()
	if r.Status != models.KeyRotating {
		t.Fatalf("rotated key reads %s", r.Status)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := env.Temporal.DescribeWorkflowExecution(ctx, workflows.APIKeyWorkflowID(k.ID), "")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no workflow for the key %v after the rotation: %v", time.Since(rotated).Round(time.Second), err)
		}
	}
	t.Logf("workflow started %v after the rotation", time.Since(rotated).Round(100*time.Millisecond))
	checkMemo(t, env, k.ID)
	eventuallyStored(t, env, k.ID, "active")
	if o := outcome(t, env, k.ID); o != workflows.APIKeyOutcomeIdle {
		t.Fatalf("workflow ended %q, want idle", o)
	}
	if l, err := env.Store.APIKeys().Lifecycle(ctx, k.ID); err != nil || l.Pending {
		t.Fatalf("lifecycle after the relay: %+v (%v), want nothing pending", l, err)
	}
	if opens(t, env, k.Secret) || !opens(t, env, r.Secret) {
		t.Fatal("after grace only the new secret may work")
	}
}
