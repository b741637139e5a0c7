// Package searchattr names and registers the service's custom search
// attributes; it imports only Temporal, so its users never import each other.
package searchattr

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// The custom search attributes, for filtering the Web UI's list. All are
// keywords: exact ids and names, never free text, a secret or a URL.
var (
	WorkspaceID     = temporal.NewSearchAttributeKeyKeyword("WorkspaceId") // not on the retention workflow
	EventType       = temporal.NewSearchAttributeKeyKeyword("EventType")
	EventID         = temporal.NewSearchAttributeKeyKeyword("EventId")
	SubscriptionIDs = temporal.NewSearchAttributeKeyKeywordList("SubscriptionIds") // every recipient
	APIKeyID        = temporal.NewSearchAttributeKeyKeyword("ApiKeyId")
	Outcome         = temporal.NewSearchAttributeKeyKeyword("Outcome") // workflows.Outcome; unset while running
)

var keys = []temporal.SearchAttributeKey{WorkspaceID, EventType, EventID, SubscriptionIDs, APIKeyID, Outcome}

// Types are the custom search attributes by name and type, for namespace creation.
func Types() map[string]enumspb.IndexedValueType {
	m := make(map[string]enumspb.IndexedValueType, len(keys))
	for _, k := range keys {
		m[k.GetName()] = k.GetValueType()
	}
	return m
}
