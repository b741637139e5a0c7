package api

import (
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/models"
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

// Refused requests spend nothing, however they interleave: the shared
// workspace bucket is back to one token exactly one refill interval after
// it ran dry, even after a flood of concurrent refusals (reserving and
// cancelling lost a token per interleaved pair).
func TestRefusalsSpendNoTokens(t *testing.T) {
	l := newLimits(config.Config{
		RateLimitReads: config.RateLimit{Rate: 1, Burst: 1}, RateLimitWrites: config.RateLimit{Rate: 1, Burst: 1},
		RateLimitEvents: config.RateLimit{Rate: 1, Burst: 1}, RateLimitWorkspaceFactor: 1,
	})
	p := models.Principal{KeyID: uuid.New(), WorkspaceID: uuid.New()}
	now := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	if _, ok := l.reads.admit(p, now); !ok {
		t.Fatal("the first request was refused")
	}
	var wg sync.WaitGroup
	for range 4000 {
		wg.Go(func() {
			if _, ok := l.reads.admit(p, now.Add(500*time.Millisecond)); ok {
				t.Error("admitted with an empty bucket")
			}
		})
	}
	wg.Wait()
	if _, ok := l.reads.admit(p, now.Add(time.Second)); !ok {
		t.Fatal("refused one refill interval later: refusals spent tokens")
	}
}

// Requests reach admit with the times they were read, which concurrent
// lookups deliver out of order; a bucket's clock must never go back, or
// each late request is credited again for time already counted (a flood
// of concurrent requests admitted 2-9 times the limit).
func TestOutOfOrderTimesAdmitNoMoreThanTheLimit(t *testing.T) {
	l := newLimits(config.Config{
		RateLimitReads: config.RateLimit{Rate: 10, Burst: 10}, RateLimitWrites: config.RateLimit{Rate: 1, Burst: 1},
		RateLimitEvents: config.RateLimit{Rate: 1, Burst: 1}, RateLimitWorkspaceFactor: 1,
	})
	p := models.Principal{KeyID: uuid.New(), WorkspaceID: uuid.New()}
	start := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	admitted := 0
	// Over one second, each request stamped either now or 900 ms earlier.
	for i := range 1000 {
		now := start.Add(time.Duration(i) * time.Millisecond)
		if i%2 == 1 {
			now = now.Add(-900 * time.Millisecond)
		}
		if _, ok := l.reads.admit(p, now); ok {
			admitted++
		}
	}
	if limit := 10 + 10; admitted > limit { // burst + one second at 10/s
		t.Fatalf("admitted %d requests in one second, want at most %d", admitted, limit)
	}
}
