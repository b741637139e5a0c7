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

// WebhookSecretInput identifies the subscription. It holds no state: each
// run starts by reading the subscription, so continue-as-new needs to
// carry nothing.
type WebhookSecretInput struct {
	WorkspaceID    uuid.UUID `json:"workspaceId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// WebhookSecretResult says why the workflow ended.
type WebhookSecretResult struct {
	Outcome string `json:"outcome"`
}

// WebhookSecret ends a signing-secret rotation's grace period, as a
// deadline timer (deadlineTimer): it sleeps until the previous secret
// expires, then erases it in the activity ClearPreviousWebhookSecret, and
// ends once no grace period is left. Each rotation signals it
// (WebhookSecretRotatedSignal), which wakes it to re-read the expiry: a
// later rotation replaces the previous secret and its expiry, earlier or
// later than the one the workflow slept towards.
//
// The timer is bookkeeping, not the guarantee: deliveries stop signing
// with the old secret at its expiry, by the database's clock, whether or
// not this workflow has run (store.AttemptState), and the worker's daily
// retention sweep erases expired secrets a missed workflow left behind.
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
