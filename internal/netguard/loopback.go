package netguard

import (
	"net"
	"net/netip"
)

// LoopbackHost reports whether a Host header names this machine
// (localhost, 127.0.0.0/8, ::1), with or without a port: where the portal
// runs over plain HTTP in development, so its links use http and its
// cookie cannot be Secure.
func LoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
