package activities

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// ApplyAPIKeyTransitionsInput names the key whose due transitions to apply.
type ApplyAPIKeyTransitionsInput struct {
	WorkspaceID uuid.UUID `json:"workspaceId"` // for logs only
	KeyID       uuid.UUID `json:"keyId"`
}

// Final states of a key (DeadlineResult.Final).
const (
	APIKeyFinalExpired = "expired"
	APIKeyFinalRevoked = "revoked"
)

// ApplyAPIKeyTransitions applies a key's due transitions (expiry, end of a
// grace period) and returns its next deadline. The store applies only what is
// due, in SQL, so it is idempotent and never undoes a newer rotation.
func (a *Activities) ApplyAPIKeyTransitions(ctx context.Context, in *ApplyAPIKeyTransitionsInput) (*DeadlineResult, error) {
	s, err := a.Store.APIKeys().ApplyDueTransitions(ctx, in.KeyID, a.now())
	if err != nil {
		return nil, err
	}
	// Only the UPDATE that applies an expiry reports it, so a retry never counts it.
	if s.Changed && !s.Revoked && s.Status == models.KeyExpired {
		a.Metrics.apiKeyExpired()
	}
	if s.Changed && a.Log != nil {
		a.Log.InfoContext(ctx, "api key transition applied",
			slog.String("workspaceId", in.WorkspaceID.String()),
			slog.String("keyId", in.KeyID.String()),
			slog.String("status", string(s.Status)))
	}
	res := &DeadlineResult{Found: s.Found, Changed: s.Changed}
	switch {
	case s.Revoked:
		res.Final = APIKeyFinalRevoked
	case s.Status == models.KeyExpired:
		res.Final = APIKeyFinalExpired
	default:
		res.Next = s.NextDeadline()
		switch {
		case res.Next == nil:
		case s.PreviousKeyExpiresAt != nil && s.PreviousKeyExpiresAt.Equal(*res.Next):
			res.NextSummary = deadlineGraceEnd // also when the expiry caps it
		default:
			res.NextSummary = deadlineKeyExpiry
		}
	}
	return res, nil
}
