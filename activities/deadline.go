package activities

import "time"

// DeadlineResult is what an activity of a deadline timer (the APIKey and
// WebhookSecret workflows) returns: its subject's state after the call
// applied what was due, read from the database. The workflow plans its
// next wake-up from it and needs nothing else of the subject, so both
// activities return this one shape. It never carries a secret.
type DeadlineResult struct {
	Found bool `json:"found"` // false: the subject no longer exists
	// Final, when set, is the state no deadline can change any more (an
	// API key "expired" or "revoked"): the workflow ends with it as its
	// outcome.
	Final string `json:"final,omitempty"`
	// Next is the earliest instant at which the subject changes by
	// itself, nil when nothing is scheduled; NextSummary names it in a
	// few words, the summary of the timer that waits for it.
	Next        *time.Time `json:"next,omitempty"`
	NextSummary string     `json:"nextSummary,omitempty"`
	Changed     bool       `json:"changed"` // this call wrote the row
}

// Timer summaries of the deadlines the activities report.
const (
	deadlineGraceEnd  = "end of grace period"
	deadlineKeyExpiry = "key expiry"
)
