package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/api"
)

// A host no DNS name can be is refused at create and update: it could only
// ever fail to resolve, and its text (an RTL override, a zero-width space,
// "→ delivered OK") would spoof every place the host is shown. The message
// names a refused character by code point, never echoing it.
func TestWebhookHostileHostsRefused(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	label63 := strings.Repeat("a", 63)
	longName := strings.Repeat(label63+".", 3) + strings.Repeat("b", 62) // 254 characters
	for _, c := range []struct{ name, url, inMessage string }{
		{"spoofed outcome (NBSP, arrow)", "https://hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK/in", "U+00A0"},
		{"arrow only", "https://hooks.example.com\u2192delivered/in", "U+2192"},
		{"right-to-left override", "https://moc.elpmaxe\u202e.hooks.example.com/in", "U+202E"},
		{"zero-width space", "https://hooks\u200b.example.com/in", "U+200B"},
		{"line separator", "https://hooks.example.com\u2028x/in", "U+2028"},
		{"escaped NBSP", "https://hooks%C2%A0x.example.com/in", "U+00A0"},
		{"fullwidth letter IDNA maps away", "https://\uff45xample.com/in", "IDNA"},
		{"ideographic full stop", "https://example\u3002com/in", "U+3002"},
		{"1,983-character host", "https://" + strings.Repeat("a", 1979) + ".com/in", "253"},
		{"254-character host", "https://" + longName + "/in", "253"},
		{"64-character label", "https://" + label63 + "a.example.com/in", "63"},
		{"empty label", "https://hooks..example.com/in", "empty"},
		{"leading hyphen", "https://-hooks.example.com/in", "hyphen"},
		{"punctuation", "https://ho'oks.example.com/in", "letters"},
		{"port with a leading zero", "https://hooks.example.com:0443/in", "leading zeros"},
		{"port 01024", "https://hooks.example.com:01024/in", "leading zeros"},
		{"IPv6 zone with an arrow", "https://[2606:2800:220:1:248:1893:25c8:1946%25x\u2192y]/in", "zone"},
		{"IPv6 zone with an RTL override", "https://[2606:2800:220:1:248:1893:25c8:1946%25\u202eusr]/in", "zone"},
		{"IPv6 zone on a public address", "https://[2606:2800:220:1:248:1893:25c8:1946%25eth0]/in", "zone"},
		{"IPv6 zone on link-local, private networks refused", "https://[fe80::1%25eth0]/in", "zone"},
	} {
		t.Run(c.name, func(t *testing.T) { refuseHookURL(t, h, hook.ID.String(), c.url, c.inMessage) })
	}
}

// refuseHookURL checks that creating a webhook with url, and moving hook
// id to it, both fail validation on "url" with a message naming inMessage
// and echoing no hostile character.
func refuseHookURL(t *testing.T, h *harness, id, url, inMessage string) {
	t.Helper()
	for _, r := range []struct {
		method, path string
		body         map[string]any
	}{
		{http.MethodPost, h.hooksPath(), map[string]any{"url": url, "eventTypes": []string{"test.created"}}},
		{http.MethodPut, h.hooksPath(id), map[string]any{"url": url}},
	} {
		rec := h.do(r.method, r.path, h.admin.Secret, r.body)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("%s %q: status %d, want 400; body %s", r.method, url, rec.Code, rec.Body)
		}
		e := checkError(t, rec, "validation_failed", "url")
		if msg := e.Error.Details[0].Message; !strings.Contains(msg, inMessage) || strings.ContainsAny(msg, "\u00a0\u202e\u200b\u2028\u2192") {
			t.Errorf("%s %q: message %q, want one naming %q and echoing no hostile character", r.method, url, msg, inMessage)
		}
	}
}

// Hosts that can be delivered to still are: IP literals as before, names at
// DNS's limits, internationalised names written in Unicode or punycode, and
// the hyphens and underscores real hosts use.
func TestWebhookHostsAccepted(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	label63 := strings.Repeat("a", 63)
	for _, u := range []string{
		"https://93.184.216.34/in",
		"https://93.184.216.34:8443/in",
		"https://[2606:2800:220:1:248:1893:25c8:1946]/in",
		"https://[2606:2800:220:1:248:1893:25c8:1946]:8443/in",
		"https://Hooks.Example.COM/in",
		"https://hooks.example.com./in",
		"https://b\u00fccher.example/in",
		"https://B\u00dcCHER.example/in",
		"https://xn--bcher-kva.example/in",
		"https://\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.example/in", // Persian, with the ZWNJ it needs
		"https://r3---sn-abc.googlevideo.com/in",
		"https://my_host.example.com/in",
		"https://" + strings.Repeat(label63+".", 3) + strings.Repeat("b", 61) + "/in", // 253 characters
		"https://hooks.example.com:443/in",
		"https://hooks.example.com:1024/in",
	} {
		h.createHook(map[string]any{"url": u, "eventTypes": []string{"test.created"}})
	}
}

// With private networks allowed, bracketed loopback and zoned link-local
// IPv6 literals are accepted as before.
func TestWebhookPrivateIPv6LiteralsWhenAllowed(t *testing.T) {
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.WebhookAllowPrivateNetworks = true })
	for _, u := range []string{"https://[::1]:8443/x", "https://[fe80::1%25eth0]:8443/x"} {
		h.createHook(map[string]any{"url": u, "eventTypes": []string{"test.created"}})
	}
}

// Even with private networks allowed, a zone is accepted only on a
// link-local address and only as an interface name: url.Parse and netip let
// any text through as a zone, Unicode included.
func TestWebhookIPv6ZonesRefusedWhenPrivateAllowed(t *testing.T) {
	h := newHarness(t, withWebhookKey, func(d *api.Deps) { d.Config.WebhookAllowPrivateNetworks = true })
	hook := h.createHook(map[string]any{"url": "https://a.example.com", "eventTypes": []string{"test.created"}})
	for _, c := range []struct{ name, url string }{
		{"public address", "https://[2606:2800:220:1:248:1893:25c8:1946%25eth0]/in"},
		{"loopback", "https://[::1%25lo]:8443/in"},
		{"arrow", "https://[fe80::1%25x\u2192y]:8443/in"},
		{"RTL override", "https://[fe80::1%25\u202eusr]:8443/in"},
		{"space", "https://[fe80::1%25eth%200]:8443/in"},
		{"16 characters", "https://[fe80::1%25" + strings.Repeat("e", 16) + "]:8443/in"},
	} {
		t.Run(c.name, func(t *testing.T) { refuseHookURL(t, h, hook.ID.String(), c.url, "zone") })
	}
	h.createHook(map[string]any{"url": "https://[fe80::1%25" + strings.Repeat("e", 15) + "]:8443/in", "eventTypes": []string{"test.created"}})
	h.createHook(map[string]any{"url": "https://[fe80::1%25br-1.a_b]:8443/in", "eventTypes": []string{"test.created"}})
}
