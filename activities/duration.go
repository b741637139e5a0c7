package activities

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration carried in payloads as a string ("2s"), which
// the Web UI shows readably rather than as nanoseconds.
type Duration time.Duration

// Durations converts waits for a payload.
func Durations(ds []time.Duration) []Duration {
	if ds == nil {
		return nil
	}
	out := make([]Duration, len(ds))
	for i, d := range ds {
		out[i] = Duration(d)
	}
	return out
}

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string: "2s", "5m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string. A bare number is refused, not
// guessed at (nanoseconds or seconds?); null leaves d as it was.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"2s\" or \"1m30s\", not %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration is a string such as \"2s\" or \"1m30s\": %w", err)
	}
	*d = Duration(v)
	return nil
}
