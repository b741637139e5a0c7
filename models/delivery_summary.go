package models

import (
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
