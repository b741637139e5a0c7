package models

import (
	"time"

	"github.com/google/uuid"
)

// EventFilter selects a workspace's events for GET .../events.
type EventFilter struct {
	WorkspaceID uuid.UUID
	Type        EventType  // empty matches all
	Since       *time.Time // inclusive; nil: no lower bound
	Until       *time.Time // exclusive; nil: no upper bound
	Page        PageRequest
}

// DeliveryFilter narrows a subscription's delivery records. The zero value
// selects every record.
type DeliveryFilter struct {
	// Success: nil for all, else only successful (true) or failed records.
	Success *bool
	EventID *uuid.UUID
}

// Empty reports whether f selects every record.
func (f DeliveryFilter) Empty() bool { return f.Success == nil && f.EventID == nil }
