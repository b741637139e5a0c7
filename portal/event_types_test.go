package portal

import (
	"encoding/json"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// The catalogue page documents every type a subscription may take, and
// each example is the JSON a receiver gets for it.
func TestEventTypeDocsCoverTheCatalogue(t *testing.T) {
	documented := map[models.EventType]bool{}
	for _, d := range eventTypeDocs {
		documented[d.Type] = true
		var body struct {
			Type models.EventType `json:"type"`
			Data map[string]any   `json:"data"`
		}
		if err := json.Unmarshal([]byte(d.Example), &body); err != nil || body.Type != d.Type || body.Data == nil {
			t.Errorf("%s: example %s is not its body (%v)", d.Type, d.Example, err)
		}
	}
	for _, typ := range append(models.EventTypes, models.EventWebhookTest) {
		if !documented[typ] {
			t.Errorf("%s is not on the event types page", typ)
		}
	}
}
