package activities

import (
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// DisplayHostMax bounds a host as shown (DisplayHost), in characters.
const DisplayHostMax = 100

// DisplayHost is a host as histories and the Web UI may show it: ASCII
// (punycode), other characters escaped as Go does, and at most DisplayHostMax
// characters, so that a host such as "example.com\u00a0→\u00a0delivered"
// cannot make a failing attempt read as delivered. It is idempotent.
func DisplayHost(host string) string {
	name, port := host, ""
	if h, p, err := net.SplitHostPort(host); err == nil && !strings.Contains(h, ":") {
		name, port = h, ":"+p // an IPv6 literal keeps its brackets and port as they are
	}
	if a, err := idna.Lookup.ToASCII(name); err == nil {
		name = a
	}
	var b strings.Builder
	for _, r := range name + port {
		if r == '…' || r < utf8.RuneSelf && unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r)
		b.WriteString(q[1 : len(q)-1])
	}
	s := b.String()
	if utf8.RuneCountInString(s) > DisplayHostMax {
		s = string([]rune(s)[:DisplayHostMax-1]) + "…"
	}
	return s
}
