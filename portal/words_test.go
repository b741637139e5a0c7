package portal

import (
	"testing"
	"time"
)

// Spans read as people say them, whole from a moment after they were set.
func TestInWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                             "no time",
		time.Hour - time.Second:       "1 hour",
		24*time.Hour - time.Second:    "24 hours",
		72 * time.Hour:                "3 days",
		168*time.Hour - time.Minute/3: "7 days",
		2160 * time.Hour:              "90 days",
		5 * time.Minute:               "5 minutes",
		time.Minute:                   "1 minute",
	} {
		if got := inWords(d); got != want {
			t.Errorf("inWords(%v) = %q, want %q", d, got, want)
		}
	}
}
