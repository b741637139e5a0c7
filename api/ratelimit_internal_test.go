package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/openlayer-ai/workspace-service/internal/config"
)

// A table of buckets never grows past maxBuckets however many addresses
// turn up; the least recently used bucket goes first.
func TestBucketsAreBounded(t *testing.T) {
	b := newBuckets[netip.Addr](config.RateLimit{Rate: 1, Burst: 1})
	first := netip.AddrFrom4([4]byte{10, 0, 0, 0})
	kept := b.get(first)
	for i := range maxBuckets + 500 {
		b.get(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
		b.get(first) // recently used, so never evicted
	}
	if n := b.len(); n != maxBuckets {
		t.Errorf("%d buckets, want %d", n, maxBuckets)
	}
	if b.get(first) != kept {
		t.Error("the most recently used bucket was evicted")
	}
	if newBuckets[netip.Addr](config.RateLimit{}) != nil {
		t.Error("a limit that is off has a table")
	}
}

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"203.0.113.9:1234":           "203.0.113.9",
		"[::ffff:203.0.113.9]:1234":  "203.0.113.9",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::",
		"[fe80::1%eth0]:443":         "fe80::",
		"not an address":             "invalid IP",
		"203.0.113.9":                "203.0.113.9",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "198.51.100.1")
		if got := clientAddr(r).String(); got != want {
			t.Errorf("clientAddr(%q) = %s, want %s", remote, got, want)
		}
	}
}
