package activities

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that workflow and activity payloads carry as
// a Go duration string ("2s", "1m30s"). Operators read payloads in the
// Temporal Web UI, where a time.Duration would show as nanoseconds
// (2000000000).
type Duration time.Duration

// Durations converts waits, such as a configured retry schedule, for a
// payload.
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

// UnmarshalJSON reads a Go duration string. A number is refused rather
// than guessed at: nanoseconds to Go, seconds to most people. null leaves
// the duration as it was, as encoding/json does for its own types.
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
