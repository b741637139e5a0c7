package portal

import (
	"net/http"

	"github.com/openlayer-ai/workspace-service/models"
)

// eventTypeDoc describes one type of the catalogue with the body a
// receiver gets for it (Standard Webhooks: {"type","timestamp","data"};
// the event id is the webhook-id header). The data of test.* events is
// what the platform publishes, so theirs are examples.
type eventTypeDoc struct {
	Type        models.EventType
	Description string
	Example     string
}

var eventTypeDocs = []eventTypeDoc{
	{models.EventTestCreated, "A test was created in a project.",
		`{"type":"test.created","timestamp":"2026-11-21T11:16:01.998213Z","data":{"testId":"9f1c","projectId":"4b0e…","name":"Accuracy above 0.9"}}`},
	{models.EventTestUpdated, "A test's definition changed.",
		`{"type":"test.updated","timestamp":"2026-11-21T11:16:01.998213Z","data":{"testId":"9f1c","projectId":"4b0e…"}}`},
	{models.EventTestDeleted, "A test was deleted.",
		`{"type":"test.deleted","timestamp":"2026-11-21T11:16:01.998213Z","data":{"testId":"9f1c","projectId":"4b0e…"}}`},
	{models.EventTestsResultUpdated, "A test's result changed (for example from passing to failing).",
		`{"type":"tests.result.updated","timestamp":"2026-11-21T11:16:01.998213Z","data":{"status":"failing","testId":"9f1c"}}`},
	{models.EventWebhookDisabled, "One of the workspace's endpoints was disabled after failing for too long (sent to the other endpoints that take it).",
		`{"type":"webhook.disabled","timestamp":"2026-11-21T11:16:01.998213Z","data":{"reason":"failing","subscriptionId":"0882997e-…"}}`},
	{models.EventWebhookDeliveryExhausted, "An event's every scheduled attempt to an endpoint failed.",
		`{"type":"webhook.delivery.exhausted","timestamp":"2026-11-21T11:16:01.998213Z","data":{"eventId":"9a7e…","subscriptionId":"0882997e-…"}}`},
	{models.EventWebhookDeliveryRecovered, "An endpoint that had exhausted a delivery received a regular event again.",
		`{"type":"webhook.delivery.recovered","timestamp":"2026-11-21T11:16:01.998213Z","data":{"eventId":"5c2d…","subscriptionId":"0882997e-…"}}`},
	{models.EventWebhookTest, "Sent only by \"Send test event\" to the one endpoint, whatever types it takes.",
		`{"type":"webhook.test","timestamp":"2026-11-21T11:16:01.998213Z","data":{"message":"This is a test event: your endpoint received and can verify webhooks from this workspace.","subscriptionId":"0882997e-…"}}`},
}

func (p *Portal) eventTypes(w http.ResponseWriter, r *http.Request) {
	p.pages.render(w, r, http.StatusOK, "event_types", view{Title: "Event types", Data: eventTypeDocs})
}
