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

// APIKeyInput identifies the key. It holds no state: each run starts by
// reading the key, so continue-as-new needs to carry nothing.
type APIKeyInput struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	KeyID       uuid.UUID `json:"keyId"`
}

// APIKeyResult says why the workflow ended.
type APIKeyResult struct {
	Outcome string `json:"outcome"`
}

// APIKey moves a key's stored state at its deadlines, as a deadline timer
// (deadlineTimer): it sleeps until the end of a grace period or the
// expiry, whichever comes first, then applies what is due in the activity
// ApplyAPIKeyTransitions. A signal (APIKeyChangedSignal, sent after a
// create, rotation or revocation) wakes it early to re-read the key. It
// ends when the key has expired, was revoked, is gone or has no deadline
// left.
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
