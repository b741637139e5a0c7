package config

import (
	"strings"
	"testing"
)

// WEBHOOK_MAX_IN_FLIGHT defaults to 10, takes any positive integer, and
// refuses the rest by name.
func TestParseWebhookMaxInFlight(t *testing.T) {
	c, err := Parse(lookup(nil))
	if err != nil || c.WebhookMaxInFlight != 10 {
		t.Fatalf("default: %d, %v", c.WebhookMaxInFlight, err)
	}
	if c, err = Parse(lookup(map[string]string{"WEBHOOK_MAX_IN_FLIGHT": "1"})); err != nil || c.WebhookMaxInFlight != 1 {
		t.Fatalf("1: %d, %v", c.WebhookMaxInFlight, err)
	}
	for _, v := range []string{"0", "-3", "ten", "1.5"} {
		_, err := Parse(lookup(map[string]string{"WEBHOOK_MAX_IN_FLIGHT": v}))
		if err == nil || !strings.Contains(err.Error(), "WEBHOOK_MAX_IN_FLIGHT") {
			t.Fatalf("%q: %v", v, err)
		}
	}
	if !strings.Contains(c.LogValue().String(), "webhookMaxInFlight=1") {
		t.Fatalf("not logged: %s", c.LogValue())
	}
}
