package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// Outcomes of an APIKey run.
const (
	APIKeyOutcomeExpired = activities.APIKeyFinalExpired // nothing more can happen to the key
	APIKeyOutcomeRevoked = activities.APIKeyFinalRevoked
	APIKeyOutcomeDeleted = deadlineOutcomeDeleted // the row is gone (its workspace was deleted)
	APIKeyOutcomeIdle    = deadlineOutcomeIdle    // no deadline left; a later rotation starts a new run
)

// APIKeyInput identifies the key; each run re-reads it, so it carries no state.
type APIKeyInput struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	KeyID       uuid.UUID `json:"keyId"`
}

// APIKeyResult says why the workflow ended.
type APIKeyResult struct {
	Outcome string `json:"outcome"`
}

// APIKey applies a key's grace-period end and expiry (ApplyAPIKeyTransitions)
// as a deadline timer (deadlineTimer) that APIKeyChangedSignal wakes.
func APIKey(ctx workflow.Context, in *APIKeyInput) (*APIKeyResult, error) {
	var a *activities.Activities
	outcome, err := deadlineTimer(ctx, deadlineSubject{
		details:         apiKeySummary(in.WorkspaceID, in.KeyID),
		signal:          APIKeyChangedSignal,
		activity:        a.ApplyAPIKeyTransitions,
		activityInput:   &activities.ApplyAPIKeyTransitionsInput{WorkspaceID: in.WorkspaceID, KeyID: in.KeyID},
		activitySummary: "apply due transitions",
		workflow:        APIKey,
		input:           in,
	})
	if err != nil {
		return nil, err
	}
	return &APIKeyResult{Outcome: outcome}, nil
}
