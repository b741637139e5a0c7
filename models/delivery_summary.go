package models

import (
	"time"

	"github.com/google/uuid"
)

// DeliverySummary is a subscription's recent health as the portal's
// endpoint list shows it: its latest attempt and its attempts since a time.
type DeliverySummary struct {
	SubscriptionID uuid.UUID
	// Last is the latest attempt's record; nil before the first.
	Last *WebhookDelivery
	// Attempts and Succeeded count the attempts since the window's start.
	Attempts, Succeeded int
}

// SuccessRate is Succeeded / Attempts as a percentage; ok is false with no attempts.
func (s DeliverySummary) SuccessRate() (pct float64, ok bool) {
	if s.Attempts == 0 {
		return 0, false
	}
	return 100 * float64(s.Succeeded) / float64(s.Attempts), true
}

// PendingDelivery is an event whose delivery to a subscription is still
// to succeed or fail: not yet attempted, or waiting for its next attempt.
type PendingDelivery struct {
	EventID          uuid.UUID
	EventDateCreated time.Time
	// Attempts made so far; the last one's status code, if any.
	Attempts       int
	LastStatusCode *int
	// NextAttemptAt is when the next attempt is due (may be past: in flight).
	NextAttemptAt *time.Time
}
