package portal

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/models"
)

// eventTypeDoc is one type of the catalogue as the page shows it: the
// schema of its data and the body a receiver gets for its example
// (Standard Webhooks: {"type","timestamp","data"}; the event id is the
// webhook-id header), both indented, rendered as text.
type eventTypeDoc struct {
	Type        models.EventType
	Description string
	Version     string
	Publishable bool
	Schema      string
	Example     string
}

// exampleTimestamp dates every example body, so the page is the same on
// every visit.
var exampleTimestamp = time.Date(2026, 11, 21, 11, 16, 1, 998213000, time.UTC)

// eventTypeDocs is the page's data, built once from the catalogue.
var eventTypeDocs = sync.OnceValue(func() []eventTypeDoc {
	var docs []eventTypeDoc
	for _, t := range eventtypes.All() {
		body, err := models.DeliveryBody(t.Name, exampleTimestamp, t.Example)
		if err != nil {
			panic("portal: the example of " + string(t.Name) + ": " + err.Error()) // the catalogue's tests rule this out
		}
		docs = append(docs, eventTypeDoc{Type: t.Name, Description: t.Description, Version: t.Version,
			Publishable: t.Publishable, Schema: indented(t.Schema), Example: indented(body)})
	}
	return docs
})

func indented(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func (p *Portal) eventTypes(w http.ResponseWriter, r *http.Request) {
	p.pages.render(w, r, http.StatusOK, "event_types", view{Title: "Event types", Data: eventTypeDocs()})
}
