package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// ClearPreviousWebhookSecretInput names the subscription whose rotated-away
// signing secret to erase once expired.
type ClearPreviousWebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"` // for logs only
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// ClearPreviousWebhookSecretResult is the subscription's state after the
// call, read from the database: the workflow plans its next wake-up from
// it. It never carries a secret.
type ClearPreviousWebhookSecretResult struct {
	Found bool `json:"found"` // false: the subscription no longer exists
	// PreviousSecretExpiresAt is the end of the grace period still
	// running, nil when there is none.
	PreviousSecretExpiresAt *time.Time `json:"previousSecretExpiresAt"`
	Cleared                 bool       `json:"cleared"` // this call erased an expired previous secret
}

// ClearPreviousWebhookSecret erases the subscription's previous signing
// secret if its grace period has ended at this activity's clock, and reads
// back what is left. It is idempotent and never undoes a newer rotation:
// the store erases only an expired secret, with the condition in SQL.
// Deliveries already stopped signing with it at the expiry (the store
// hides an expired previous secret by the database's clock), so this only
// keeps a dead secret from lingering in the table.
func (a *Activities) ClearPreviousWebhookSecret(ctx context.Context, in *ClearPreviousWebhookSecretInput) (*ClearPreviousWebhookSecretResult, error) {
	s, err := a.Store.Webhooks().ClearExpiredPreviousSecret(ctx, in.SubscriptionID, a.now())
	if err != nil {
		return nil, err
	}
	if s.Cleared {
		a.log().InfoContext(ctx, "webhook signing secret grace period ended: previous secret erased",
			slog.String("workspaceId", in.WorkspaceID.String()),
			slog.String("subscriptionId", in.SubscriptionID.String()))
	}
	return &ClearPreviousWebhookSecretResult{Found: s.Found, PreviousSecretExpiresAt: s.ExpiresAt, Cleared: s.Cleared}, nil
}
