package workflows

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// WebhookSecretWorkflowID is the ID of a subscription's secret workflow.
func WebhookSecretWorkflowID(subscriptionID uuid.UUID) string {
	return "webhook-secret:" + subscriptionID.String()
}

// WebhookSecretRotatedSignal tells a secret workflow of a rotation.
const WebhookSecretRotatedSignal = "webhook-secret-rotated"

// WebhookSecretRotation is the payload of WebhookSecretRotatedSignal; the
// workflow re-reads the expiry. Rotation is the subscription's count of
// rotations when the outbox relay told it, for the Web UI.
type WebhookSecretRotation struct {
	Rotation int64 `json:"rotation"`
}

// WebhookSecretMemo is the memo of a secret workflow. It never holds a secret.
func WebhookSecretMemo(workspaceID, subscriptionID uuid.UUID) map[string]any {
	return map[string]any{"workspaceId": workspaceID.String(), "subscriptionId": subscriptionID.String()}
}

// WebhookSecretStartOptions start a subscription's secret workflow.
func WebhookSecretStartOptions(workspaceID, subscriptionID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:        WebhookSecretWorkflowID(subscriptionID),
		TaskQueue: taskQueue,
		Memo:      WebhookSecretMemo(workspaceID, subscriptionID),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.WorkspaceID.ValueSet(workspaceID.String()),
			searchattr.SubscriptionIDs.ValueSet([]string{subscriptionID.String()}),
		),
		StaticSummary: webhookSecretSummary(workspaceID, subscriptionID),
		Priority:      workspacePriority(workspaceID, PriorityPerson),
	}
}

func webhookSecretSummary(workspaceID, subscriptionID uuid.UUID) string {
	return "Signing-secret grace period of webhook subscription " + subscriptionID.String() +
		" (workspace " + workspaceID.String() + ")"
}

// SignalWithStartWebhookSecret sends rotation, starting the workflow if none
// runs; bare is as in SignalWithStartAPIKey.
func SignalWithStartWebhookSecret(ctx context.Context, c client.Client, workspaceID, subscriptionID uuid.UUID, taskQueue string, rotation WebhookSecretRotation) (bare bool, err error) {
	opts := WebhookSecretStartOptions(workspaceID, subscriptionID, taskQueue)
	in := &WebhookSecretInput{WorkspaceID: workspaceID, SubscriptionID: subscriptionID}
	return startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, WebhookSecretRotatedSignal, rotation, opts, WebhookSecret, in)
		return err
	}, opts)
}
