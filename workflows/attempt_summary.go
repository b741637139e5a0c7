package workflows

import (
	"net"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/net/idna"
)

// summaryHostMax bounds the host shown in a summary, in characters.
const summaryHostMax = 100

// attemptSummary reads "attempt 2 → hooks.example.com": the host an
// earlier attempt to the subscription reported (only the host: a URL's
// path or query may carry a token), or the subscription's id before any
// did. The attempt's result names the host it went to.
func attemptSummary(n int, host string, subID uuid.UUID) string {
	to := summaryHost(host)
	if to == "" {
		to = "subscription " + subID.String()
	}
	return "attempt " + strconv.Itoa(n) + " → " + to
}

// summaryHost is a host as the Web UI may show it: its ASCII (punycode)
// form, any other character escaped as Go does (\u00a0, \u202e) and at
// most summaryHostMax characters. The API refuses hosts no DNS name can
// be, but subscriptions stored before it did may hold one, such as
// "hooks.example.com\u00a0→\u00a0delivered\u00a0OK", which shown as is
// would make a failing attempt read as delivered. A summary is not part
// of a command's identity, so changing its text changes no replay.
func summaryHost(host string) string {
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil && !strings.Contains(h, ":") {
		name, port = h, ":"+p // an IPv6 literal keeps its brackets and port as they are
	}
	if a, err := idna.Lookup.ToASCII(name); err == nil {
		name = a
	}
	q := strconv.QuoteToASCII(name + port)
	s := q[1 : len(q)-1]
	if utf8.RuneCountInString(s) > summaryHostMax {
		s = s[:summaryHostMax-1] + "…" // ASCII after quoting, so bytes are characters
	}
	return s
}
