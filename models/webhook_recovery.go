package models

import (
	"time"

	"github.com/google/uuid"
)

// RedeliveryAccepted answers a redelivery handed to the event's workflow.
type RedeliveryAccepted struct {
	EventID        uuid.UUID `json:"eventId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// RecoveryState is where a recovery is.
type RecoveryState string

// Recovery states.
const (
	RecoveryRunning   RecoveryState = "running"   // still looking for failed deliveries
	RecoveryCompleted RecoveryState = "completed" // every failed delivery was redelivered
	RecoveryStopped   RecoveryState = "stopped"   // subscription disabled or deleted (StopReason)
	RecoveryFailed    RecoveryState = "failed"    // a page's redelivery outlasted its retries
)

// Reasons a recovery stopped early.
const (
	RecoveryStopDisabled = "subscription_disabled"
	RecoveryStopDeleted  = "subscription_deleted"
)

// WebhookRecovery is the progress of redelivering once each failed delivery
// of a subscription whose event was created in [Since, Until).
type WebhookRecovery struct {
	// ID is the first run id of its workflow, webhook-recover:<subscriptionId>.
	ID             string        `json:"id"`
	SubscriptionID uuid.UUID     `json:"subscriptionId"`
	State          RecoveryState `json:"state"`
	StopReason     string        `json:"stopReason,omitempty"`
	Since          time.Time     `json:"since"`
	Until          time.Time     `json:"until"`
	Found          int           `json:"found"`
	Redelivered    int           `json:"redelivered"`

	Done       bool       `json:"done"` // State is not running
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
}
