package workflows

import (
	"context"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/openlayer-ai/workspace-service/internal/searchattr"
)

// This file holds what starts and signals the APIKey workflow (its ID,
// signal, memo, search attributes and start options), which the API and
// the worker's outbox relay uses.

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
// for the history and the Web UI, and not the new deadlines: the workflow
// takes it as a wake-up only and re-reads the key from the database (see
// deadlineTimer), so signals from several API processes may arrive in any
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
// its WorkspaceId and ApiKeyId search attributes and memo, which a
// continued-as-new run keeps, and its summary, which only the first run
// has (every run shows the same line as its current details; see APIKey).
// It sets no Outcome: a key's workflow ends with its result (expired,
// revoked, deleted, idle), and the key's state is the API's to report.
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
	}
}

// apiKeySummary is the line the Web UI shows for a key's workflow.
func apiKeySummary(workspaceID, keyID uuid.UUID) string {
	return "Lifecycle of API key " + keyID.String() + " (workspace " + workspaceID.String() + ")"
}

// SignalWithStartAPIKey sends change to the key's workflow, starting one
// (see APIKeyStartOptions) if none runs.
//
// The search attributes are for operators and never a condition of a
// key's lifecycle, so a start the server refuses as invalid (the namespace
// does not define WorkspaceId or ApiKeyId: Temporal Cloud, where workers
// may not register them, a namespace made by hand, or the seconds after a
// worker registered them) is made again without them, as StartDelivery
// does; a refused request delivered no signal, so the change is sent once.
// The workflow sets no attribute itself, so such a run works as any other,
// only not findable by them in the Web UI (by its ID it is). Without this
// the change would wait in its outbox for as long as the
// namespace lacks them. bare reports such a fallback, for the caller to
// log; when it fails too, the error says why the first attempt did.
func SignalWithStartAPIKey(ctx context.Context, c client.Client, workspaceID, keyID uuid.UUID, taskQueue string, change APIKeyChange) (bare bool, err error) {
	opts := APIKeyStartOptions(workspaceID, keyID, taskQueue)
	in := &APIKeyInput{WorkspaceID: workspaceID, KeyID: keyID}
	return startOrBare(func(opts client.StartWorkflowOptions) error {
		_, err := c.SignalWithStartWorkflow(ctx, opts.ID, APIKeyChangedSignal, change, opts, APIKey, in)
		return err
	}, opts)
}
