package secret

import "strings"

// WebhookHeaderBinding is the additional data a sensitive custom header's
// value is sealed with: the subscription id and the lower-cased name, so a
// value copied to another subscription, another header or a signing-secret
// column does not open.
func WebhookHeaderBinding(subscriptionID [16]byte, name string) []byte {
	out := make([]byte, 0, len(subscriptionID)+len("header:")+len(name))
	out = append(out, subscriptionID[:]...)
	out = append(out, "header:"...)
	return append(out, strings.ToLower(name)...)
}
