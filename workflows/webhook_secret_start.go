package workflows

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// This file holds what starts and signals the WebhookSecret workflow (its
// ID, signal, memo, search attributes and start options), which the API
// uses after a signing-secret rotation.

// WebhookSecretWorkflowID is the ID of a subscription's signing-secret
// workflow: at most one runs per subscription, so every rotation's
// signal-with-start reaches the same run.
func WebhookSecretWorkflowID(subscriptionID uuid.UUID) string {
	return "webhook-secret:" + subscriptionID.String()
}

// WebhookSecretRotatedSignal tells a subscription's secret workflow that
// its signing secret was rotated.
const WebhookSecretRotatedSignal = "webhook-secret-rotated"

// WebhookSecretRotation is the payload of WebhookSecretRotatedSignal. It
// carries no secret and no deadline: the workflow re-reads the grace
// period's end from the database, so signals from several API processes
// may arrive in any order without it acting on a stale one. RequestID ties
// the signal, in the Web UI, to the API request that rotated.
type WebhookSecretRotation struct {
	RequestID string `json:"requestId,omitempty"`
}

// WebhookSecretMemo is the memo of a subscription's secret workflow, for
// the Web UI. It never holds a secret.
func WebhookSecretMemo(workspaceID, subscriptionID uuid.UUID) map[string]any {
	return map[string]any{"workspaceId": workspaceID.String(), "subscriptionId": subscriptionID.String()}
}

// WebhookSecretStartOptions start a subscription's secret workflow (with
// the signal, as SignalWithStartWorkflow does): one run per subscription,
// findable in the Web UI by its WorkspaceId and SubscriptionIds search
// attributes and memo, which a continued-as-new run keeps, and its summary,
// which only the first run has (every run shows the same line as its
// current details).
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
	}
}

// webhookSecretSummary is the line the Web UI shows for the workflow.
func webhookSecretSummary(workspaceID, subscriptionID uuid.UUID) string {
	return "Signing-secret grace period of webhook subscription " + subscriptionID.String() +
		" (workspace " + workspaceID.String() + ")"
}

// SignalWithStartWebhookSecret sends rotation to the subscription's secret
// workflow, starting one (see WebhookSecretStartOptions) if none runs.
// Like SignalWithStartAPIKey, a start the server refuses as invalid (the
// namespace lacks the search attributes) is made again without them; bare
// reports that fallback, for the caller to log, and when the fallback fails
// too the error says why the first attempt did.
func SignalWithStartWebhookSecret(ctx context.Context, c client.Client, workspaceID, subscriptionID uuid.UUID, taskQueue string, rotation WebhookSecretRotation) (bare bool, err error) {
	opts := WebhookSecretStartOptions(workspaceID, subscriptionID, taskQueue)
	in := &WebhookSecretInput{WorkspaceID: workspaceID, SubscriptionID: subscriptionID}
	return startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, WebhookSecretRotatedSignal, rotation, opts, WebhookSecret, in)
		return err
	}, opts)
}
