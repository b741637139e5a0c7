package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
)

// ClearPreviousWebhookSecretInput names the subscription whose rotated-away
// signing secret to erase once expired.
type ClearPreviousWebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"` // for logs only
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// ClearPreviousWebhookSecret erases the subscription's previous signing
// secret if its grace period has ended at this activity's clock, and reads
// back what is left: the next deadline is the end of the grace period
// still running, if any. It is idempotent and never undoes a newer
// rotation: the store erases only an expired secret, with the condition in
// SQL. Deliveries already stopped signing with it at the expiry (the store
// hides an expired previous secret by the database's clock), so this only
// keeps a dead secret from lingering in the table.
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
