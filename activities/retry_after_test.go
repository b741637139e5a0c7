package activities

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"30", 30 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{now.Add(45 * time.Second).Format(http.TimeFormat), 45 * time.Second},
		{"Monday, 23-Nov-26 12:01:00 GMT", time.Minute},  // RFC 850
		{"Mon Nov 23 12:00:10 2026", 10 * time.Second},   // ANSI C
		{now.Add(-time.Hour).Format(http.TimeFormat), 0}, // past
		{"-5", 0},
		{"1.5", 0},
		{"30s", 0},
		{"soon", 0},
		{"", 0},
		{"99999999999", maxRetryAfterHeader},
		{"999999999999999999999999", maxRetryAfterHeader},
		{now.Add(1000 * time.Hour).Format(http.TimeFormat), maxRetryAfterHeader},
	} {
		if got := parseRetryAfter(c.in, now); got != c.want {
			t.Errorf("Retry-After %q: %v, want %v", c.in, got, c.want)
		}
	}
}
