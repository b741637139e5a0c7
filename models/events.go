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

	// Operational events: the service publishes them about a workspace's
	// own subscriptions (never with an event's data); subscriptions may
	// take them, clients may not publish them.
	EventWebhookDisabled          EventType = "webhook.disabled"
	EventWebhookDeliveryExhausted EventType = "webhook.delivery.exhausted"
	EventWebhookDeliveryRecovered EventType = "webhook.delivery.recovered"

	// EventWebhookTest is sent only by POST .../webhooks/{id}/test, to that
	// one subscription; no subscription takes it by type.
	EventWebhookTest EventType = "webhook.test"
)

// EventTypes lists every event type a subscription may take, in the order
// messages name them.
var EventTypes = []EventType{EventTestCreated, EventTestUpdated, EventTestDeleted, EventTestsResultUpdated,
	EventWebhookDisabled, EventWebhookDeliveryExhausted, EventWebhookDeliveryRecovered}

// Valid reports whether t is in the catalogue.
func (t EventType) Valid() bool {
	return slices.Contains(EventTypes, t)
}

// Operational reports whether t is one of the service's own events about
// webhook subscriptions (webhook.*): never published by clients, and a
// failure to deliver one never raises another (two failing subscriptions
// would otherwise feed each other events forever).
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
