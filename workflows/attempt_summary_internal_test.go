package workflows

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/activities"
)

// A summary shows the host in its ASCII form, escapes every other
// character and stays short, so a host stored before the API refused such
// hosts cannot make a failing attempt read as delivered in the Web UI.
func TestAttemptSummaryHost(t *testing.T) {
	sub := uuid.MustParse("3f2b1c9e-0000-4000-8000-000000000001")
	long := strings.Repeat("a", 1979) + ".com"
	for _, c := range []struct{ host, want string }{
		{"hooks.example.com", "attempt 2 → hooks.example.com"},
		{"hooks.example.com:8443", "attempt 2 → hooks.example.com:8443"},
		{"[2001:db8::1]:8443", "attempt 2 → [2001:db8::1]:8443"},
		{"93.184.216.34", "attempt 2 → 93.184.216.34"},
		{"b\u00fccher.example:8443", "attempt 2 → xn--bcher-kva.example:8443"},
		{"hooks\u200b.example.com", "attempt 2 → hooks.example.com"}, // where the HTTP client goes: IDNA drops U+200B
		{"hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK", `attempt 2 → hooks.example.com\u00a0\u2192\u00a0delivered\u00a0OK`},
		{"moc.elpmaxe\u202e.hooks.example.com", `attempt 2 → moc.elpmaxe\u202e.hooks.example.com`},
		{"a\u2028b.example.com", `attempt 2 → a\u2028b.example.com`},
		{long, "attempt 2 → " + long[:99] + "…"},
		{"", "attempt 2 → subscription " + sub.String()},
	} {
		got := attemptSummary(2, c.host, sub)
		if got != c.want {
			t.Errorf("host %q: summary %q, want %q", c.host, got, c.want)
		}
		host := strings.TrimPrefix(got, "attempt 2 → ")
		if n := utf8.RuneCountInString(host); n > activities.DisplayHostMax+len("subscription ")+36 {
			t.Errorf("host %q: %d characters shown", c.host, n)
		}
		for _, r := range host {
			if r != '…' && (r >= utf8.RuneSelf || !unicode.IsPrint(r)) {
				t.Errorf("host %q: summary %q shows %U", c.host, got, r)
			}
		}
	}
}
