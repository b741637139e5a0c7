package models

import (
	"bytes"
	"encoding/json"
	"time"
)

// DeliveryBody is the Standard Webhooks body of an event, the same bytes on
// every attempt: what the attempts send and the portal shows (the event id
// travels in the signed webhook-id header, not here).
func DeliveryBody(typ EventType, created time.Time, data json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Type      EventType       `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{typ, created.UTC(), data})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}
