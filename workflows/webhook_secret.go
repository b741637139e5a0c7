package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"

	"github.com/openlayer-ai/workspace-service/activities"
)

// Outcomes of a WebhookSecret run.
const (
	WebhookSecretOutcomeIdle    = deadlineOutcomeIdle    // no grace period left; the next rotation starts a new run
	WebhookSecretOutcomeDeleted = deadlineOutcomeDeleted // the subscription is gone
)

// WebhookSecretInput identifies the subscription; each run re-reads it.
type WebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// WebhookSecretResult says why the workflow ended.
type WebhookSecretResult struct {
	Outcome string `json:"outcome"`
}

// WebhookSecret erases a subscription's previous signing secret once expired
// (deadlineTimer). It is bookkeeping: deliveries stop signing with an expired
// secret by the database's clock, and the retention sweep erases leftovers.
func WebhookSecret(ctx workflow.Context, in *WebhookSecretInput) (*WebhookSecretResult, error) {
	var a *activities.Activities
	outcome, err := deadlineTimer(ctx, deadlineSubject{
		details:         webhookSecretSummary(in.WorkspaceID, in.SubscriptionID),
		signal:          WebhookSecretRotatedSignal,
		activity:        a.ClearPreviousWebhookSecret,
		activityInput:   &activities.ClearPreviousWebhookSecretInput{WorkspaceID: in.WorkspaceID, SubscriptionID: in.SubscriptionID},
		activitySummary: "erase the previous secret if expired",
		workflow:        WebhookSecret,
		input:           in,
	})
	if err != nil {
		return nil, err
	}
	return &WebhookSecretResult{Outcome: outcome}, nil
}
