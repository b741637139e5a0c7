package webhookops

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// DNS limits on a name in ASCII form, without the trailing dot (RFC 1035 §2.3.4).
const (
	hostNameMax  = 253
	hostLabelMax = 63
)

// hostProblem says what keeps a webhook URL's host from ever being delivered
// to, or "" when nothing does. A host no DNS name can be (an RTL override, a
// zero-width space, "→", 2,000 characters) would only fail with a DNS error,
// and its text would show wherever the host is displayed.
//
// Non-ASCII characters must be ones IDNA2008 allows (Go's UTS #46 tables
// still admit symbols), and idna.Lookup must change nothing but case, so the
// host a client sees is the host called. The ASCII form is held to DNS's
// limits, not idna.Lookup's hyphen and STD3 rules, which refuse real hosts
// such as r3---sn-abc.googlevideo.com.
func hostProblem(host string, allowPrivate bool) string {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return zoneProblem(a, allowPrivate)
		}
		return ""
	}
	for _, r := range host {
		if r >= utf8.RuneSelf && !nameRune(r) {
			return fmt.Sprintf("must have a host that is an IP address or a domain name; %U cannot be part of one", r)
		}
	}
	ascii := host
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil || !sameLabels(host, a) {
			return "must have a host that is an IP address or a domain name valid under IDNA (its ASCII form names the same host)"
		}
		ascii = a
	}
	return asciiNameProblem(ascii)
}

// zoneMax is Linux's longest interface name (IFNAMSIZ less the NUL).
const zoneMax = 15

// zoneProblem refuses an IPv6 zone ("%25eth0") unless private networks are
// allowed and the address is link-local, since a zone names an interface of
// this machine; and one that is not an interface name, since url.Parse and
// netip let any text through. The message never echoes the zone.
func zoneProblem(a netip.Addr, allowPrivate bool) string {
	if !allowPrivate || !a.IsLinkLocalUnicast() {
		return "must have a host without an IPv6 zone (%25...): zones are accepted only on link-local addresses, with private networks allowed"
	}
	z := a.Zone()
	if len(z) > zoneMax || strings.IndexFunc(z, notZoneByte) >= 0 {
		return fmt.Sprintf("must have a host whose IPv6 zone is an interface name of 1 to %d letters, digits, dots, underscores or hyphens", zoneMax)
	}
	return ""
}

func notZoneByte(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
}

// nameRune admits the non-ASCII characters IDNA2008 lets a label hold:
// letters, marks, digits, the joiners (ZWNJ, ZWJ) and RFC 5892's CONTEXTO
// characters. Format characters such as U+202E and symbols are refused.
func nameRune(r rune) bool {
	switch r {
	case '\u200c', '\u200d', '\u00b7', '\u0375', '\u05f3', '\u05f4', '\u30fb':
		return true
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.Nd)
}

// sameLabels reports whether IDNA changed nothing but case: each label of
// host equals, up to case, that of ascii or of ascii read back as Unicode.
func sameLabels(host, ascii string) bool {
	uni, err := idna.Lookup.ToUnicode(ascii)
	if err != nil {
		return false
	}
	hl, al, ul := strings.Split(host, "."), strings.Split(ascii, "."), strings.Split(uni, ".")
	if len(hl) != len(al) || len(hl) != len(ul) {
		return false
	}
	for i := range hl {
		if !strings.EqualFold(hl[i], al[i]) && !strings.EqualFold(hl[i], ul[i]) {
			return false
		}
	}
	return true
}

// asciiNameProblem checks a name in its ASCII form against DNS's limits.
func asciiNameProblem(name string) string {
	name = strings.TrimSuffix(name, ".")
	if len(name) > hostNameMax {
		return fmt.Sprintf("must have a host of at most %d characters in its ASCII (punycode) form", hostNameMax)
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return "must have a host without empty labels (two dots in a row, or a leading dot)"
		case len(label) > hostLabelMax:
			return fmt.Sprintf("must have a host whose labels (the parts between dots) are at most %d characters in ASCII (punycode) form", hostLabelMax)
		case label[0] == '-' || label[len(label)-1] == '-':
			return "must have a host whose labels do not start or end with a hyphen"
		case strings.IndexFunc(label, notHostByte) >= 0:
			return "must have a host made of letters, digits, hyphens and dots"
		}
	}
	return ""
}

func notHostByte(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
