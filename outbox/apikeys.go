package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.temporal.io/api/serviceerror"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// APIKeys is the outbox of API key changes the key's workflow has not heard of.
type APIKeys struct{ Deps }

// Name is the outbox's name.
func (APIKeys) Name() string { return store.OutboxAPIKeys }

// Claim leases pending keys, oldest change first.
func (k APIKeys) Claim(ctx context.Context, limit int, lease time.Duration) ([]store.KeyLifecycle, error) {
	return k.Store.APIKeys().ClaimUnsynced(ctx, lease, limit)
}

// Send tells the key's workflow of l, starting it only if the key has a deadline.
func (k APIKeys) Send(ctx context.Context, l store.KeyLifecycle) error {
	if k.Temporal == nil {
		return errNoTemporal
	}
	ctx, span := startLifecycleSpan(ctx, "outbox signal api key workflow", l.Change(), attribute.String("api_key.id", l.ID.String()))
	defer span.End()
	err := k.send(ctx, l)
	if err != nil {
		span.SetStatus(codes.Error, "signal failed")
	}
	return err
}

func (k APIKeys) send(ctx context.Context, l store.KeyLifecycle) error {
	id := workflows.APIKeyWorkflowID(l.ID)
	change := workflows.APIKeyChange{Reason: keyChangeReason(l)}
	if l.Revoked || (l.ExpiresAt == nil && l.PreviousKeyExpiresAt == nil) {
		err := k.Temporal.SignalWorkflow(ctx, id, "", workflows.APIKeyChangedSignal, change)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	bare, err := workflows.SignalWithStartAPIKey(ctx, k.Temporal, l.WorkspaceID, l.ID, k.TaskQueue, change)
	if bare && k.Log != nil {
		k.Log.Warn("outbox: api key workflow signalled without search attributes: the namespace does not define them (see docs/operations.md); a run started so works, but the Web UI cannot find it by them",
			slog.String("keyId", l.ID.String()), slog.String("workflowId", id))
	}
	return err
}

// keyChangeReason names the key's last change. Only "revoked" changes what
// the workflow does, and it is final, so reading it from the row is right.
func keyChangeReason(l store.KeyLifecycle) string {
	switch {
	case l.Revoked:
		return workflows.APIKeyRevoked
	case l.Rotated:
		return workflows.APIKeyRotated
	default:
		return workflows.APIKeyCreated
	}
}

// Sent marks each key's change, as of the number read, synced.
func (k APIKeys) Sent(ctx context.Context, ls []store.KeyLifecycle) error {
	return markSynced(ctx, ls, k.Store.APIKeys().MarkSynced)
}

// Failed holds back a key whose call failed until its retry time.
func (k APIKeys) Failed(ctx context.Context, l store.KeyLifecycle) (store.SendFailure, error) {
	return k.Store.APIKeys().ReleaseFailed(ctx, l.Change())
}

// Release gives the others back.
func (k APIKeys) Release(ctx context.Context, ls []store.KeyLifecycle) error {
	return release(ctx, ls, k.Store.APIKeys().ReleaseClaims)
}
