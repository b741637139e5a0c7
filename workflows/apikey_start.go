package workflows

import (
	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// This file holds what starts and signals the APIKey workflow (its ID,
// signal, memo, search attributes and start options), which the API and
// the worker's reconciler (keysync) both use.

// APIKeyWorkflowID is the ID of a key's lifecycle workflow. There is at most
// one running per key, so a repeated signal-with-start reaches the same run.
func APIKeyWorkflowID(keyID uuid.UUID) string { return "api-key:" + keyID.String() }

// APIKeyChangedSignal tells a key's workflow that the API changed the key.
const APIKeyChangedSignal = "api-key-changed"

// Reasons an APIKeyChange carries.
const (
	APIKeyCreated = "created"
	APIKeyRotated = "rotated"
	APIKeyRevoked = "revoked"
)

// APIKeyChange is the payload of APIKeyChangedSignal. It says what happened,
// not the new deadlines: the workflow re-reads those from the database (see
// apiKeyLifecycle), so signals from several API processes may arrive in any
// order without the workflow ever acting on a stale schedule.
type APIKeyChange struct {
	Reason string `json:"reason"`
}

// APIKeyMemo is the memo of a key's workflow, for the Web UI. It never
// holds a secret.
func APIKeyMemo(workspaceID, keyID uuid.UUID) map[string]any {
	return map[string]any{"workspaceId": workspaceID.String(), "keyId": keyID.String()}
}

// APIKeyStartOptions start a key's workflow (with the signal, as
// SignalWithStartWorkflow does): one run per key, findable in the Web UI by
// its WorkspaceId and ApiKeyId search attributes, memo and summary; a
// continued-as-new run keeps them. It sets no Outcome: a key's workflow
// ends with its result (expired, revoked, deleted, idle), and the key's
// state is the API's to report.
func APIKeyStartOptions(workspaceID, keyID uuid.UUID, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:        APIKeyWorkflowID(keyID),
		TaskQueue: taskQueue,
		Memo:      APIKeyMemo(workspaceID, keyID),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			searchattr.WorkspaceID.ValueSet(workspaceID.String()),
			searchattr.APIKeyID.ValueSet(keyID.String()),
		),
		StaticSummary: "Lifecycle of API key " + keyID.String() + " (workspace " + workspaceID.String() + ")",
	}
}
