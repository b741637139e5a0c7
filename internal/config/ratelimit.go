package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RateLimit is a token bucket: Burst requests at once, refilled at Rate
// per second. The zero value (Off) admits everything.
type RateLimit struct {
	Rate  float64 // tokens per second
	Burst int
}

// Off reports whether the limit is disabled.
func (l RateLimit) Off() bool { return l.Burst == 0 }

// Scale multiplies both figures, for workspace budgets.
func (l RateLimit) Scale(n int) RateLimit {
	return RateLimit{Rate: l.Rate * float64(n), Burst: l.Burst * n}
}

// String writes the limit the way ParseRateLimit reads it.
func (l RateLimit) String() string {
	if l.Off() {
		return "off"
	}
	rate, unit := l.Rate, "/s:"
	if rate < 1 {
		rate, unit = rate*60, "/m:"
	}
	return strconv.FormatFloat(rate, 'f', -1, 64) + unit + strconv.Itoa(l.Burst)
}

// rateUnits are the periods a limit may be written per.
var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// ParseRateLimit reads "<count>/<s|m|h>:<burst>", such as "10/s:20" or
// "20/m:20", or "off".
func ParseRateLimit(s string) (RateLimit, error) {
	s = strings.TrimSpace(s)
	if s == "off" {
		return RateLimit{}, nil
	}
	bad := fmt.Errorf("want <count>/<s|m|h>:<burst> such as 10/s:20, or off, got %q", s)
	perUnit, burst, ok := strings.Cut(s, ":")
	if !ok {
		return RateLimit{}, bad
	}
	count, unit, ok := strings.Cut(perUnit, "/")
	if !ok {
		return RateLimit{}, bad
	}
	per, ok := rateUnits[unit]
	n, err := strconv.ParseFloat(count, 64)
	if !ok || err != nil || !(n > 0) || n > 1e9 {
		return RateLimit{}, bad
	}
	b, err := strconv.Atoi(burst)
	if err != nil || b < 1 || b > 1e9 {
		return RateLimit{}, bad
	}
	return RateLimit{Rate: n / per.Seconds(), Burst: b}, nil
}
