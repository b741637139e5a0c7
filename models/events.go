package models

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EventType names something that happened on the platform. EventTypes is the
// one catalogue: subscriptions and published events are checked against it.
type EventType string

// The event catalogue.
const (
	EventTestCreated        EventType = "test.created"
	EventTestUpdated        EventType = "test.updated"
	EventTestDeleted        EventType = "test.deleted"
	EventTestsResultUpdated EventType = "tests.result.updated"
)

// EventTypes lists every event type, in the order messages name them.
var EventTypes = []EventType{EventTestCreated, EventTestUpdated, EventTestDeleted, EventTestsResultUpdated}

// Valid reports whether t is in the catalogue.
func (t EventType) Valid() bool {
	return slices.Contains(EventTypes, t)
}

// EventTypeList is the catalogue as text, for validation messages.
func EventTypeList() string {
	names := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// EventDataMax bounds the data of a published event, in bytes of JSON.
const EventDataMax = 256 << 10

// Event is a published event. DispatchedAt is the outbox mark: nil until its
// delivery workflow has been started. Recipients are the subscriptions the
// event goes to, fixed when it was accepted (nil only for events stored
// before recipients were recorded).
type Event struct {
	ID           uuid.UUID
	WorkspaceID  uuid.UUID
	Type         EventType
	Data         json.RawMessage
	DateCreated  time.Time
	DispatchedAt *time.Time
	Recipients   []uuid.UUID
}

// NewEvent is a validated event to store.
type NewEvent struct {
	WorkspaceID uuid.UUID
	Type        EventType
	Data        json.RawMessage
}

// EventAccepted is the answer to publishing an event.
type EventAccepted struct {
	ID uuid.UUID `json:"id"`
}
