// Package searchattr names the custom search attributes of the service's
// workflows and registers them in a namespace. It is a leaf: it imports
// only the Temporal SDK and API, so the workflows that set the attributes,
// the worker that registers them, and the embedded and multi-process test
// servers that create namespaces with them all depend on it, never on each
// other.
package searchattr

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// The custom search attributes, so an operator can filter the Web UI's
// list (or `temporal workflow list --query`) by what a workflow is about.
// All are keywords: exact-match ids and names, never free text, and never
// a secret, a signature or a URL.
var (
	// WorkspaceID: the workspace of an event's delivery or of an API key
	// (not set on the retention workflow, which spans workspaces).
	WorkspaceID = temporal.NewSearchAttributeKeyKeyword("WorkspaceId")
	// EventType: the delivered event's type, e.g. "project.created".
	EventType = temporal.NewSearchAttributeKeyKeyword("EventType")
	// EventID: the delivered event's id (also in the workflow id).
	EventID = temporal.NewSearchAttributeKeyKeyword("EventId")
	// SubscriptionIDs: every recipient subscription of the event, so
	// `SubscriptionIds = "<id>"` lists one subscription's deliveries.
	SubscriptionIDs = temporal.NewSearchAttributeKeyKeywordList("SubscriptionIds")
	// APIKeyID: the key of an API key's lifecycle workflow.
	APIKeyID = temporal.NewSearchAttributeKeyKeyword("ApiKeyId")
	// Outcome: how a delivery ended, set as it finishes and unset while
	// it runs: delivered, skipped, gone, exhausted, or error (an attempt
	// could not be made, or the workflow was cancelled); the values of
	// workflows.Outcome.
	Outcome = temporal.NewSearchAttributeKeyKeyword("Outcome")
)

// keys lists every attribute Ensure registers.
var keys = []temporal.SearchAttributeKey{WorkspaceID, EventType, EventID, SubscriptionIDs, APIKeyID, Outcome}

// Types are the custom search attributes by name and type, for a server
// that takes them at namespace creation (harness/devtemporal).
func Types() map[string]enumspb.IndexedValueType {
	m := make(map[string]enumspb.IndexedValueType, len(keys))
	for _, k := range keys {
		m[k.GetName()] = k.GetValueType()
	}
	return m
}
