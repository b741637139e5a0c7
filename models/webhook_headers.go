package models

// Custom headers' limits and mask, as docs/api.md states them.
const (
	WebhookHeadersMax     = 20
	WebhookHeaderNameMax  = 128  // bytes
	WebhookHeaderValueMax = 1024 // bytes: printable ASCII, one byte a character

	// WebhookHeaderMask stands for a sensitive header's value in every
	// response; sent back for the same name on update, it keeps the value.
	WebhookHeaderMask = "********"
)

// WebhookHeader is one custom header a subscription sends on every attempt.
type WebhookHeader struct {
	Name string
	// Value is a plain header's value; in a delivery, the opened sensitive one.
	Value     string
	Sensitive bool
	// Sealed is a sensitive value encrypted with the key ring, bound to the
	// subscription and the lower-cased name (secret.WebhookHeaderBinding).
	Sealed []byte
	// Keep: an update sent the mask, so the stored sensitive value stays.
	Keep bool
}

// HeadersView is how responses show custom headers: every name, sensitive
// values as WebhookHeaderMask, and which names are sensitive.
func HeadersView(hs []WebhookHeader) (map[string]string, []string) {
	shown, sensitive := make(map[string]string, len(hs)), []string{}
	for _, h := range hs {
		if h.Sensitive {
			shown[h.Name] = WebhookHeaderMask
			sensitive = append(sensitive, h.Name)
			continue
		}
		shown[h.Name] = h.Value
	}
	return shown, sensitive
}
