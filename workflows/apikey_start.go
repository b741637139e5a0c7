package workflows

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// APIKeyWorkflowID is the ID of a key's workflow: one per key.
func APIKeyWorkflowID(keyID uuid.UUID) string { return "api-key:" + keyID.String() }

// APIKeyChangedSignal tells a key's workflow that the API changed the key.
const APIKeyChangedSignal = "api-key-changed"

// Reasons an APIKeyChange carries.
const (
	APIKeyCreated = "created"
	APIKeyRotated = "rotated"
	APIKeyRevoked = "revoked"
)

// APIKeyChange is the payload of APIKeyChangedSignal, for the history only.
type APIKeyChange struct {
	Reason string `json:"reason"`
}

// APIKeyMemo is the memo of a key's workflow. It never holds a secret.
func APIKeyMemo(workspaceID, keyID uuid.UUID) map[string]any {
	return map[string]any{"workspaceId": workspaceID.String(), "keyId": keyID.String()}
}

// APIKeyStartOptions start a key's workflow. It sets no Outcome: a key's state
// is the API's to report.
func APIKeyStartOptions(workspaceID, keyID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:        APIKeyWorkflowID(keyID),
		TaskQueue: taskQueue,
		Memo:      APIKeyMemo(workspaceID, keyID),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.WorkspaceID.ValueSet(workspaceID.String()),
			searchattr.APIKeyID.ValueSet(keyID.String()),
		),
		StaticSummary: apiKeySummary(workspaceID, keyID),
		Priority:      workspacePriority(workspaceID, PriorityPerson),
	}
}

func apiKeySummary(workspaceID, keyID uuid.UUID) string {
	return "Lifecycle of API key " + keyID.String() + " (workspace " + workspaceID.String() + ")"
}

// SignalWithStartAPIKey sends change, starting the key's workflow if none
// runs; bare reports a start without search attributes (startOrBare).
func SignalWithStartAPIKey(ctx context.Context, c client.Client, workspaceID, keyID uuid.UUID, taskQueue string, change APIKeyChange) (bare bool, err error) {
	opts := APIKeyStartOptions(workspaceID, keyID, taskQueue)
	in := &APIKeyInput{WorkspaceID: workspaceID, KeyID: keyID}
	return startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, APIKeyChangedSignal, change, opts, APIKey, in)
		return err
	}, opts)
}
