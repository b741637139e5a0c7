package activities

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// An attempt's result carries its host as the Web UI may show it: a
// subscription stored before the API refused hostile hosts cannot put an
// RTL override or "→ delivered OK" into the history. Applying DisplayHost
// again changes nothing, as the workflow does to every result's host.
func TestAttemptResultHost(t *testing.T) {
	long := strings.Repeat("a", 1979) + ".com"
	for _, c := range []struct{ url, want string }{
		{"https://hooks.example.com/in?token=x", "hooks.example.com"},
		{"https://user:pw@Hooks.Example.COM:8443/in", "hooks.example.com:8443"},
		{"https://[2001:db8::1]:8443/in", "[2001:db8::1]:8443"},
		{"https://b\u00fccher.example/in", "xn--bcher-kva.example"},
		{"https://hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK/in", `hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK`},
		{"https://moc.elpmaxe\u202e.hooks.example.com/in", `moc.elpmaxe\u202e.hooks.example.com`},
		{"https://[fe80::1%25x\u2192y]/in", `[fe80::1%x\u2192y]`},
		{"https://" + long + "/in", long[:99] + "…"},
		{"https://a\u2026" + long + "/in", `a…` + long[:97] + "…"},
		{"::", ""},
	} {
		got := hostOf(c.url)
		if got != c.want {
			t.Errorf("%q: host %q, want %q", c.url, got, c.want)
		}
		if again := DisplayHost(got); again != got {
			t.Errorf("%q: DisplayHost(%q) = %q, not idempotent", c.url, got, again)
		}
		if n := utf8.RuneCountInString(got); n > DisplayHostMax {
			t.Errorf("%q: %d characters", c.url, n)
		}
		for _, r := range got {
			if r != '…' && (r >= utf8.RuneSelf || !unicode.IsPrint(r)) {
				t.Errorf("%q: host %q shows %U", c.url, got, r)
			}
		}
	}
}
