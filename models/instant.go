package models

import (
	"errors"
	"time"
)

// errOffset: RFC 3339 allows offsets of -23:59 to +23:59; time.Parse takes
// +24:00 and beyond.
var errOffset = errors.New("offset out of range")

// ParseInstant reads an RFC 3339 date-time as the instant it names, in
// UTC: responses give every instant in UTC, whatever offset a client sent.
func ParseInstant(raw string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, err
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return time.Time{}, errOffset
	}
	return t.UTC(), nil
}
