package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
)

// ClearPreviousWebhookSecretInput names the subscription.
type ClearPreviousWebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"` // for logs only
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// ClearPreviousWebhookSecret erases the subscription's previous signing secret
// once expired and returns the next grace-period end. The store erases only
// an expired secret, in SQL, so it is idempotent and never undoes a rotation.
func (a *Activities) ClearPreviousWebhookSecret(ctx context.Context, in *ClearPreviousWebhookSecretInput) (*DeadlineResult, error) {
	s, err := a.Store.Webhooks().ClearExpiredPreviousSecret(ctx, in.SubscriptionID, a.now())
	if err != nil {
		return nil, err
	}
	if s.Cleared {
		a.log().InfoContext(ctx, "webhook signing secret grace period ended: previous secret erased",
			slog.String("workspaceId", in.WorkspaceID.String()),
			slog.String("subscriptionId", in.SubscriptionID.String()))
	}
	res := &DeadlineResult{Found: s.Found, Next: s.ExpiresAt, Changed: s.Cleared}
	if res.Next != nil {
		res.NextSummary = deadlineGraceEnd
	}
	return res, nil
}
