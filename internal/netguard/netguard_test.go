package netguard_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/netguard"
)

// One address from each refused range, in the forms an attacker might use.
var blocked = []string{
	"127.0.0.1", "127.255.255.254", // loopback
	"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", // private
	"169.254.169.254", "169.254.0.1", // link-local, cloud metadata
	"224.0.0.1", "239.255.255.250", // multicast
	"0.0.0.0", "0.1.2.3", // unspecified, "this network"
	"100.64.0.1", "100.127.255.255", // CGNAT
	"255.255.255.255", "240.0.0.1", // broadcast, reserved
	"192.0.0.8", "192.0.2.1", "198.18.0.1", "198.51.100.7", "203.0.113.9",
	"::1", "::", // loopback, unspecified
	"fc00::1", "fd12:3456::1", // unique local
	"fe80::1", "fe80::1%eth0", // link-local, with a zone
	"ff02::1", "ff05::2", // multicast
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", // IPv4-mapped
	"::127.0.0.1",                           // IPv4-compatible
	"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", // NAT64 of loopback and metadata
	"2002:7f00:1::1", "2002:a00:1::1", // 6to4 of loopback and private
	"2001:db8::1", "2001:0:4136:e378::1", "100::1", "fec0::1",
	"64:ff9b:1::a00:1", "64:ff9b:1:7f00:1::", // local-use NAT64
}

var allowed = []string{
	"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.128.0.1", "172.32.0.1", "192.169.0.1",
	"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8",
	"64:ff9b::808:808", "2002:808:808::1",
}

// The reason names the right range even where ranges overlap.
func TestBlockedReason(t *testing.T) {
	if reason, _ := netguard.Blocked(netip.MustParseAddr("::1")); reason != "loopback" {
		t.Errorf("::1 blocked as %q, want loopback", reason)
	}
}

func TestBlocked(t *testing.T) {
	for _, s := range blocked {
		ip := netip.MustParseAddr(s)
		if reason, bad := netguard.Blocked(ip); !bad || reason == "" {
			t.Errorf("%s is allowed, want blocked", s)
		}
	}
	for _, s := range allowed {
		if reason, bad := netguard.Blocked(netip.MustParseAddr(s)); bad {
			t.Errorf("%s is blocked (%s), want allowed", s, reason)
		}
	}
}

// Control sees "ip:port" after resolution; it must refuse every blocked
// range in that form, for both families.
func TestControl(t *testing.T) {
	for _, s := range blocked {
		ip := netip.MustParseAddr(s)
		network := "tcp6"
		if ip.Is4() {
			network = "tcp4"
		}
		err := netguard.Control(network, netip.AddrPortFrom(ip, 443).String(), nil)
		var be *netguard.BlockedError
		if !errors.As(err, &be) {
			t.Errorf("Control(%s) = %v, want a BlockedError", s, err)
		}
	}
	for _, s := range allowed {
		ip := netip.MustParseAddr(s)
		network := "tcp6"
		if ip.Is4() {
			network = "tcp4"
		}
		if err := netguard.Control(network, netip.AddrPortFrom(ip, 443).String(), nil); err != nil {
			t.Errorf("Control(%s) = %v, want nil", s, err)
		}
	}
	if err := netguard.Control("udp4", "8.8.8.8:53", nil); err == nil {
		t.Error("udp was allowed")
	}
}

func TestBlockedHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "169.254.169.254": true, "10.1.2.3": true,
		"example.com": false, "8.8.8.8": false, "localhost": false, // names: checked at dial time
	} {
		if _, got := netguard.BlockedHost(host); got != want {
			t.Errorf("BlockedHost(%q) = %v, want %v", host, got, want)
		}
	}
}
