package outbox

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/workflows"
)

// WebhookSecrets is the outbox of signing-secret rotations the subscription's
// workflow has not heard of; it is bookkeeping, as expiry needs no workflow.
type WebhookSecrets struct{ Deps }

// Name is the outbox's name.
func (WebhookSecrets) Name() string { return store.OutboxWebhookSecrets }

// Claim leases subscriptions with a pending rotation.
func (s WebhookSecrets) Claim(ctx context.Context, limit int, lease time.Duration) ([]store.LifecycleChange, error) {
	return s.Store.Webhooks().ClaimUnsyncedSecrets(ctx, lease, limit)
}

// Send signals the subscription's workflow, starting it if none runs.
func (s WebhookSecrets) Send(ctx context.Context, c store.LifecycleChange) error {
	if s.Temporal == nil {
		return errNoTemporal
	}
	ctx, span := startLifecycleSpan(ctx, "outbox signal webhook secret workflow", c, attribute.String("webhook.id", c.ID.String()))
	defer span.End()
	bare, err := workflows.SignalWithStartWebhookSecret(ctx, s.Temporal, c.WorkspaceID, c.ID, s.TaskQueue,
		workflows.WebhookSecretRotation{Rotation: c.Seq})
	if bare && s.Log != nil {
		s.Log.Warn("outbox: webhook secret workflow started without search attributes: the namespace does not define them",
			slog.String("subscriptionId", c.ID.String()))
	}
	if err != nil {
		span.SetStatus(codes.Error, "signal failed")
	}
	return err
}

// Sent marks each rotation, as of the number read, synced.
func (s WebhookSecrets) Sent(ctx context.Context, cs []store.LifecycleChange) error {
	return markSynced(ctx, cs, s.Store.Webhooks().MarkSecretsSynced)
}

// Failed holds back a subscription whose call failed until its retry time.
func (s WebhookSecrets) Failed(ctx context.Context, c store.LifecycleChange) (store.SendFailure, error) {
	return s.Store.Webhooks().ReleaseFailedSecret(ctx, c)
}

// Release gives the others back.
func (s WebhookSecrets) Release(ctx context.Context, cs []store.LifecycleChange) error {
	return release(ctx, cs, s.Store.Webhooks().ReleaseSecretClaims)
}
