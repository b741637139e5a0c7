package webhooks_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openlayer-ai/workspace-service/harness/testenv"
	"github.com/openlayer-ai/workspace-service/models"
)

// A receiver's view of the catalogue: it reads the running API's OpenAPI
// document and GET /v1/event-types, subscribes to every publishable type,
// and each delivery (the catalogue's examples, published; a test event)
// verifies with the reference library, carries the headers the document's
// webhooks section requires, and validates against that section's body
// schema, which refuses a mistyped member.
func TestDeliveriesMatchTheOpenAPIWebhooks(t *testing.T) {
	env := testenv.Start(t)
	status, raw := env.Do(t, http.MethodGet, "/openapi.json", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json: %d", status)
	}
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`))
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	var catalogue struct {
		Items []struct {
			Name        string          `json:"name"`
			Publishable bool            `json:"publishable"`
			Example     json.RawMessage `json:"example"`
		} `json:"items"`
	}
	env.DoJSON(t, http.MethodGet, "/event-types", env.AdminKey, nil, http.StatusOK, &catalogue)

	rc := newReceiver(t, http.StatusOK)
	var types []string
	for _, typ := range catalogue.Items {
		if typ.Publishable {
			types = append(types, typ.Name)
		}
	}
	hook := subscribe(t, env, rc, map[string]any{"url": rc.URL + "/hooks", "eventTypes": types})
	for _, typ := range catalogue.Items {
		if typ.Publishable {
			publish(t, env, typ.Name, typ.Example)
		}
	}
	env.DoJSON(t, http.MethodPost, wsPath(env, "/webhooks/"+hook.ID.String()+"/test"), env.AdminKey, nil, http.StatusAccepted, nil)

	got := rc.wait(t, len(types)+1, 30*time.Second)
	seen := map[string]bool{}
	for _, d := range got {
		if d.verifyErr != nil {
			t.Errorf("%s: the reference library rejects the signature: %v", d.body, d.verifyErr)
		}
		var body map[string]any
		if err := json.Unmarshal(d.body, &body); err != nil {
			t.Fatalf("body %s: %v", d.body, err)
		}
		typ, _ := body["type"].(string)
		seen[typ] = true
		hook := doc.Webhooks[typ]
		if hook == nil || hook.Post == nil {
			t.Errorf("the document's webhooks have no %s", typ)
			continue
		}
		for _, p := range hook.Post.Parameters {
			if p.Value.In == openapi3.ParameterInHeader && p.Value.Required && d.header.Get(p.Value.Name) == "" {
				t.Errorf("%s: no %s header", typ, p.Value.Name)
			}
		}
		schema := hook.Post.RequestBody.Value.Content.Get("application/json").Schema.Value
		if err := schema.VisitJSON(body, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: body %s does not match the document: %v", typ, d.body, err)
		}
		// The same schema refuses a mistyped member: it describes data,
		// not any object.
		bad := map[string]any{"type": typ, "timestamp": body["timestamp"], "data": map[string]any{"subscriptionId": 1, "testId": 1}}
		if schema.VisitJSON(bad, openapi3.EnableJSONSchema2020()) == nil {
			t.Errorf("%s: the document's body schema accepts data with numbers for ids", typ)
		}
	}
	for _, typ := range append(types, string(models.EventWebhookTest)) {
		if !seen[typ] {
			t.Errorf("no %s delivery among %d", typ, len(got))
		}
	}
}
