// Package netguard keeps outbound webhook requests away from the service's
// own network (loopback, private, link-local, other special ranges). It checks
// in the dialer's Control hook, on the IP actually dialled, so no DNS
// re-resolution slips between check and use.
package netguard

import (
	"fmt"
	"net/netip"
	"syscall"
)

// blockedPrefixes are special-purpose ranges no webhook receiver lives in;
// IPv4-mapped, NAT64 and 6to4 addresses are checked on the IPv4 they embed.
var blockedPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255

	{netip.MustParsePrefix("::1/128"), "loopback"}, // before ::/96, which also holds it
	{netip.MustParsePrefix("::/96"), "unspecified or IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"}, // embeds IPv4 in site-specific ways
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Blocked reports whether ip is off limits, and why.
func Blocked(ip netip.Addr) (reason string, blocked bool) {
	if !ip.IsValid() {
		return "invalid address", true
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			if r, bad := Blocked(netip.AddrFrom4([4]byte(b[12:16]))); bad {
				return r + " (NAT64)", true
			}
		case sixToFour.Contains(ip):
			if r, bad := Blocked(netip.AddrFrom4([4]byte(b[2:6]))); bad {
				return r + " (6to4)", true
			}
		}
	}
	for _, p := range blockedPrefixes {
		if p.prefix.Contains(ip) {
			return p.reason, true
		}
	}
	return "", false
}

// BlockedError is the dial error for a refused address.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("address %s is not allowed (%s network); set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true only for local development", e.Addr, e.Reason)
}

// Control is a net.Dialer Control function that refuses blocked addresses.
// It runs after resolution, once per address tried, just before connect.
func Control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp4", "tcp6":
	default:
		return fmt.Errorf("network %q is not allowed", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected dial address %q: %w", address, err)
	}
	if reason, bad := Blocked(ap.Addr()); bad {
		return &BlockedError{Addr: ap.Addr().Unmap(), Reason: reason}
	}
	return nil
}

// BlockedHost reports whether host is a blocked IP literal, so such a URL is
// refused when configured; names are checked at dial time only.
func BlockedHost(host string) (reason string, blocked bool) {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	return Blocked(ip)
}
