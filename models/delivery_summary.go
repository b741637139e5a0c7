package models

import (
	"time"

	"github.com/google/uuid"
)

// DeliverySummary is a subscription's recent health as the portal's
// endpoint pages show it: its latest attempt and, since a time, the events
// attempted and the attempts made.
type DeliverySummary struct {
	SubscriptionID uuid.UUID
	// Last is the latest attempt's record; nil before the first.
	Last *WebhookDelivery
	// Events counts the events attempted since the window's start, each
	// once; Succeeded those of them with a successful attempt in it.
	Events, Succeeded int
	// Attempts counts the attempts, redeliveries included.
	Attempts int
}

// SuccessRate is Succeeded / Events as a percentage; ok is false with no
// events.
func (s DeliverySummary) SuccessRate() (pct float64, ok bool) {
	if s.Events == 0 {
		return 0, false
	}
	return 100 * float64(s.Succeeded) / float64(s.Events), true
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
