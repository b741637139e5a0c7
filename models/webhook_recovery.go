package models

import (
	"time"

	"github.com/google/uuid"
)

// RedeliveryAccepted answers a redelivery request: the attempt was handed
// to the event's delivery workflow, which makes it now; its record appears
// in the subscription's deliveries.
type RedeliveryAccepted struct {
	EventID        uuid.UUID `json:"eventId"`
	SubscriptionID uuid.UUID `json:"subscriptionId"`
}

// RecoveryState is where a recovery is.
type RecoveryState string

// Recovery states.
const (
	// RecoveryRunning: failed deliveries are still being looked for.
	RecoveryRunning RecoveryState = "running"
	// RecoveryCompleted: every failed delivery of the window was redelivered
	// (handed to its event's workflow, which makes the attempt).
	RecoveryCompleted RecoveryState = "completed"
	// RecoveryStopped: the subscription was disabled or deleted meanwhile
	// (StopReason); the rest of the window was left alone.
	RecoveryStopped RecoveryState = "stopped"
	// RecoveryFailed: a page could not be redelivered for as long as the
	// workflow retries (30 days of Temporal or the database away).
	RecoveryFailed RecoveryState = "failed"
)

// Reasons a recovery stopped early.
const (
	RecoveryStopDisabled = "subscription_disabled"
	RecoveryStopDeleted  = "subscription_deleted"
)

// WebhookRecovery is a recovery's progress: the failed deliveries of a
// subscription whose events were created in [Since, Until), each
// redelivered once. Found counts the failed deliveries met so far,
// Redelivered those handed to their event's workflow.
type WebhookRecovery struct {
	// ID names this recovery among the subscription's (the first run id
	// of its workflow, webhook-recover:<subscriptionId>).
	ID             string        `json:"id"`
	SubscriptionID uuid.UUID     `json:"subscriptionId"`
	State          RecoveryState `json:"state"`
	StopReason     string        `json:"stopReason,omitempty"`
	Since          time.Time     `json:"since"`
	Until          time.Time     `json:"until"`
	Found          int           `json:"found"`
	Redelivered    int           `json:"redelivered"`
	// Done: nothing more will be redelivered (State is not running).
	Done       bool       `json:"done"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
}
