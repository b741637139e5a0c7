package config

import "testing"

func TestParseRateLimit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want RateLimit
		text string
	}{
		{"50/s:100", RateLimit{Rate: 50, Burst: 100}, "50/s:100"},
		{" 0.5/s:1 ", RateLimit{Rate: 0.5, Burst: 1}, "30/m:1"},
		{"20/m:20", RateLimit{Rate: 20.0 / 60, Burst: 20}, "20/m:20"},
		{"7200/h:5", RateLimit{Rate: 2, Burst: 5}, "2/s:5"},
		{"off", RateLimit{}, "off"},
	} {
		got, err := ParseRateLimit(c.in)
		if err != nil || got != c.want || got.String() != c.text {
			t.Errorf("ParseRateLimit(%q) = %+v (%s), %v; want %+v (%s)", c.in, got, got, err, c.want, c.text)
		}
	}
	if !(RateLimit{}).Off() || (RateLimit{Rate: 1, Burst: 1}).Off() {
		t.Error("Off: only the zero limit is off")
	}
	for _, in := range []string{"", "50", "50/s", "50:100", "x/s:1", "-1/s:1", "0/s:1", "NaN/s:1", "Inf/s:1",
		"1/d:1", "1/s:0", "1/s:-3", "1/s:1.5", "1/s:x", "Off", "1/s:99999999999"} {
		if l, err := ParseRateLimit(in); err == nil {
			t.Errorf("ParseRateLimit(%q) = %+v, want an error", in, l)
		}
	}
}
