package models

import (
	"time"

	"github.com/google/uuid"
)

// EventFilter selects a workspace's events, for GET .../events and the
// portal's Messages page: by type and time, and to the events one
// subscription receives and/or a recipient of which (that subscription,
// if any) has a status.
type EventFilter struct {
	WorkspaceID    uuid.UUID
	Type           EventType      // empty matches all
	Since          *time.Time     // inclusive; nil: no lower bound
	Until          *time.Time     // exclusive; nil: no upper bound
	SubscriptionID *uuid.UUID     // nil: any recipient, or none
	Status         DeliveryStatus // empty: any status
	Page           PageRequest
}

// DeliveryFilter narrows a subscription's delivery records; zero selects all.
type DeliveryFilter struct {
	Success *bool // nil: all; else successful (true) or failed records
	EventID *uuid.UUID
}

// Empty reports whether f selects every record.
func (f DeliveryFilter) Empty() bool { return f.Success == nil && f.EventID == nil }
