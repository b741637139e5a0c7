package activities

import "time"

// DeadlineResult is a deadline timer's subject as its activity left it, all
// the workflow needs to plan its next wake-up. It never carries a secret.
type DeadlineResult struct {
	Found bool `json:"found"` // false: the subject no longer exists
	// Final is a state no deadline changes any more; the workflow ends with it.
	Final string `json:"final,omitempty"`
	// Next is when the subject changes by itself (nil: never); NextSummary names it.
	Next        *time.Time `json:"next,omitempty"`
	NextSummary string     `json:"nextSummary,omitempty"`
	Changed     bool       `json:"changed"` // this call wrote the row
}

// Timer summaries of the deadlines the activities report.
const (
	deadlineGraceEnd  = "end of grace period"
	deadlineKeyExpiry = "key expiry"
)
