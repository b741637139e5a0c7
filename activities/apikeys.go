package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// ApplyAPIKeyTransitionsInput names the key whose due transitions to apply.
type ApplyAPIKeyTransitionsInput struct {
	WorkspaceID uuid.UUID `json:"workspaceId"` // for logs only
	KeyID       uuid.UUID `json:"keyId"`
}

// ApplyAPIKeyTransitionsResult is the key's state after the call, read
// from the database: the workflow plans its next wake-up from it.
type ApplyAPIKeyTransitionsResult struct {
	Found                bool             `json:"found"` // false: the key no longer exists
	Revoked              bool             `json:"revoked"`
	Status               models.KeyStatus `json:"status"` // the stored status
	ExpiresAt            *time.Time       `json:"expiresAt"`
	PreviousKeyExpiresAt *time.Time       `json:"previousKeyExpiresAt"`
	Changed              bool             `json:"changed"` // this attempt wrote the row
}

// NextDeadline is the earliest instant at which the key changes by itself,
// or nil when nothing is scheduled.
func (r *ApplyAPIKeyTransitionsResult) NextDeadline() *time.Time {
	return models.APIKeySchedule{ExpiresAt: r.ExpiresAt, PreviousKeyExpiresAt: r.PreviousKeyExpiresAt}.NextDeadline()
}

// ApplyAPIKeyTransitions moves the stored status of a key and erases a
// previous secret whose grace period has ended, as the timestamps dictate
// at this activity's clock. It is idempotent: the store applies only what is
// due, with the conditions in SQL, so a retry or a late run writes nothing
// more and never undoes a newer rotation.
func (a *Activities) ApplyAPIKeyTransitions(ctx context.Context, in *ApplyAPIKeyTransitionsInput) (*ApplyAPIKeyTransitionsResult, error) {
	s, err := a.Store.APIKeys().ApplyDueTransitions(ctx, in.KeyID, a.now())
	if err != nil {
		return nil, err
	}
	// Only ApplyDueTransitions writes the expired status, clearing the
	// previous secret in the same UPDATE, and it writes nothing when
	// nothing is due: a change to expired is this call's expiry, counted
	// once (a retry after the commit finds nothing to change).
	if s.Changed && !s.Revoked && s.Status == models.KeyExpired {
		a.Metrics.apiKeyExpired()
	}
	if s.Changed && a.Log != nil {
		a.Log.InfoContext(ctx, "api key transition applied",
			slog.String("workspaceId", in.WorkspaceID.String()),
			slog.String("keyId", in.KeyID.String()),
			slog.String("status", string(s.Status)))
	}
	return &ApplyAPIKeyTransitionsResult{
		Found:                s.Found,
		Revoked:              s.Revoked,
		Status:               s.Status,
		ExpiresAt:            s.ExpiresAt,
		PreviousKeyExpiresAt: s.PreviousKeyExpiresAt,
		Changed:              s.Changed,
	}, nil
}
