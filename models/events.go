package models

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EventType names something that happened; EventTypes lists the names, and
// package eventtypes holds each one's description, data schema and example.
type EventType string

// The event catalogue.
const (
	EventTestCreated        EventType = "test.created"
	EventTestUpdated        EventType = "test.updated"
	EventTestDeleted        EventType = "test.deleted"
	EventTestsResultUpdated EventType = "tests.result.updated"

	EventWebhookDisabled          EventType = "webhook.disabled"
	EventWebhookDeliveryExhausted EventType = "webhook.delivery.exhausted"
	EventWebhookDeliveryRecovered EventType = "webhook.delivery.recovered"

	// EventWebhookTest goes only to the subscription POST .../test names.
	EventWebhookTest EventType = "webhook.test"
)

// EventTypes lists every event type a subscription may take.
var EventTypes = []EventType{EventTestCreated, EventTestUpdated, EventTestDeleted, EventTestsResultUpdated,
	EventWebhookDisabled, EventWebhookDeliveryExhausted, EventWebhookDeliveryRecovered}

// Valid reports whether t is in the catalogue.
func (t EventType) Valid() bool {
	return slices.Contains(EventTypes, t)
}

// Operational reports whether t is one of the service's own webhook.* events,
// whose failures raise no others, so failing subscriptions never feed each other.
func (t EventType) Operational() bool {
	return strings.HasPrefix(string(t), "webhook.")
}

// Publishable reports whether clients may publish t.
func (t EventType) Publishable() bool {
	return t.Valid() && !t.Operational()
}

// PublishableEventTypeList is the catalogue clients may publish, as text.
func PublishableEventTypeList() string {
	var names []string
	for _, t := range EventTypes {
		if t.Publishable() {
			names = append(names, string(t))
		}
	}
	return strings.Join(names, ", ")
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

// Event is a published event. DispatchedAt is nil until its workflow starts;
// Recipients are fixed at acceptance (nil for events stored before that).
type Event struct {
	ID           uuid.UUID
	WorkspaceID  uuid.UUID
	Type         EventType
	Data         json.RawMessage
	DateCreated  time.Time
	DispatchedAt *time.Time
	Recipients   []uuid.UUID
	// Trace is the publishing request's trace context as W3C headers
	// (traceparent, tracestate); nil when tracing was off.
	Trace map[string]string
}

// NewEvent is a validated event to store.
type NewEvent struct {
	WorkspaceID uuid.UUID
	Type        EventType
	Data        json.RawMessage
	Trace       map[string]string
}

// EventAccepted is the answer to publishing an event.
type EventAccepted struct {
	ID uuid.UUID `json:"id"`
}
