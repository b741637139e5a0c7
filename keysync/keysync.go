// Package keysync tells API keys' lifecycle workflows (workflows.APIKey)
// about key changes, with the same guarantee the event outbox gives
// deliveries. Every change a workflow must hear of (a create with an
// expiry, a rotation, a revocation) is recorded as pending in the key's row
// by the change's own transaction (see store.KeyLifecycle). The API
// notifies right after commit; when that fails (Temporal unreachable, the
// process stopped in between) the worker's reconciler notifies later. Both
// go through Notifier.Sync, and notifying twice is harmless: a signal only
// makes the workflow re-read the key, and a signal-with-start reaches the
// run already going.
package keysync

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// Reconciler defaults: how often the worker looks, how old a pending change
// must be before the reconciler takes it over from the API (past the API's
// own 5 s bound on its Temporal call, so the two rarely both signal), and
// how long a claim keeps other replicas off a key.
const (
	SweepInterval = 2 * time.Second
	SweepMinAge   = 10 * time.Second
	claimLease    = time.Minute
	sweepBatch    = 50
	callTimeout   = 10 * time.Second
)

var errNoTemporal = errors.New("keysync: no Temporal client")

// Notifier signals keys' workflows and marks the changes it delivered.
type Notifier struct {
	Temporal  client.Client
	Store     *store.Store
	TaskQueue string
	Log       *slog.Logger
}

// Notify tells the key's workflow about the key as it now stands. It reads
// the row first, so it covers the caller's committed change and any later
// one. A key that no longer exists needs nothing.
func (n Notifier) Notify(ctx context.Context, keyID uuid.UUID) error {
	if n.Temporal == nil {
		return errNoTemporal
	}
	l, err := n.Store.APIKeys().Lifecycle(ctx, keyID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return n.Sync(ctx, l)
}

// Sync signals the workflow of a key in state l and then marks l.Seq
// synced. A key with a deadline (and not revoked) gets its workflow
// started if none runs; otherwise only a running workflow needs to hear of
// it (to stop, or to drop a deadline that no longer holds), and none
// running counts as delivered.
func (n Notifier) Sync(ctx context.Context, l store.KeyLifecycle) error {
	if n.Temporal == nil {
		return errNoTemporal
	}
	if err := n.signal(ctx, l); err != nil {
		return err
	}
	_, err := n.Store.APIKeys().MarkLifecycleSynced(ctx, l.ID, l.Seq)
	return err
}

func (n Notifier) signal(ctx context.Context, l store.KeyLifecycle) error {
	id := workflows.APIKeyWorkflowID(l.ID)
	change := workflows.APIKeyChange{Reason: reason(l)}
	if l.Revoked || (l.ExpiresAt == nil && l.PreviousKeyExpiresAt == nil) {
		err := n.Temporal.SignalWorkflow(ctx, id, "", workflows.APIKeyChangedSignal, change)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	bare, err := workflows.SignalWithStartAPIKey(ctx, n.Temporal, l.WorkspaceID, l.ID, n.TaskQueue, change)
	if bare && n.Log != nil {
		n.Log.Warn("keysync: api key workflow signalled without search attributes: the namespace does not define them (see docs/operations.md); a run started so works, but the Web UI cannot find it by them",
			slog.String("keyId", l.ID.String()), slog.String("workflowId", id))
	}
	return err
}

// reason names the key's last change as the workflow's signal reports it.
// Only "revoked" changes what the workflow does; it is final, so reading
// it from the row is always right.
func reason(l store.KeyLifecycle) string {
	switch {
	case l.Revoked:
		return workflows.APIKeyRevoked
	case l.Rotated:
		return workflows.APIKeyRotated
	default:
		return workflows.APIKeyCreated
	}
}

// Sweep notifies the workflows of keys whose change has been pending for
// at least minAge and reports how many it delivered. It stops at the first
// failure (Temporal is likely down) and gives the rest of its claim back
// for the next round.
func (n Notifier) Sweep(ctx context.Context, minAge time.Duration) (int, error) {
	now := time.Now()
	keys, err := n.Store.APIKeys().ClaimUnsynced(ctx, now.Add(-minAge), now, claimLease, sweepBatch)
	if err != nil {
		return 0, err
	}
	for i, l := range keys {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := n.Sync(cctx, l)
		cancel()
		if err != nil {
			rest := make([]uuid.UUID, 0, len(keys)-i)
			for _, k := range keys[i:] {
				rest = append(rest, k.ID)
			}
			// Best effort: unreleased claims lapse after claimLease anyway.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
			_ = n.Store.APIKeys().ReleaseClaims(rctx, rest)
			cancel()
			return i, err
		}
	}
	return len(keys), nil
}

// Run sweeps every interval until ctx ends, logging counts (never
// secrets). It never gives up: while Temporal or the database is away each
// round fails, is logged, and the next one tries again. onSynced (may be
// nil) hears how many changes each round delivered.
func (n Notifier) Run(ctx context.Context, interval, minAge time.Duration, onSynced func(int)) {
	if n.Log == nil {
		n.Log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		count, err := n.Sweep(ctx, minAge)
		if count > 0 {
			n.Log.Info("keysync: notified api key workflows of changes the API could not deliver", slog.Int("count", count))
			if onSynced != nil {
				onSynced(count)
			}
		}
		if err != nil && ctx.Err() == nil {
			n.Log.Warn("keysync: notifying api key workflows failed; retrying next round", slog.Any("error", err))
		}
	}
}
