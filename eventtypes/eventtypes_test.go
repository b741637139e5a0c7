package eventtypes

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

// Every type a receiver may get has an entry whose schema compiles as
// JSON Schema 2020-12 and whose example validates against it.
func TestCatalogueCoversEveryTypeWithAValidExample(t *testing.T) {
	c, err := read()
	if err != nil {
		t.Fatal(err)
	}
	var names []models.EventType
	for _, typ := range c.types {
		names = append(names, typ.Name)
		var schema struct {
			Dialect string `json:"$schema"`
			Type    string `json:"type"`
		}
		if err := json.Unmarshal(typ.Schema, &schema); err != nil || schema.Dialect != "https://json-schema.org/draft/2020-12/schema" || schema.Type != "object" {
			t.Errorf("%s: schema %s, want a 2020-12 schema of an object", typ.Name, typ.Schema)
		}
		if typ.Description == "" || typ.Version == "" || len(typ.Example) == 0 {
			t.Errorf("%s: description %q, version %q, example %s: want all three", typ.Name, typ.Description, typ.Version, typ.Example)
		}
		if p := typ.Check(typ.Example); p != nil {
			t.Errorf("%s: the example does not validate: %+v", typ.Name, p)
		}
		if typ.Publishable != typ.Name.Publishable() {
			t.Errorf("%s: publishable %v", typ.Name, typ.Publishable)
		}
	}
	if want := append(slices.Clone(models.EventTypes), models.EventWebhookTest); !slices.Equal(names, want) {
		t.Errorf("catalogue %v, want %v", names, want)
	}
	entries, err := files.ReadDir("catalogue")
	if err != nil || len(entries) != len(names) {
		t.Errorf("catalogue/ holds %d files (%v), want one per type (%d)", len(entries), err, len(names))
	}
}

// Each type refuses data that breaks its schema, naming the value's path
// under data and the schema keyword; data the service and its clients
// sent before the catalogue (any members, none required for test.*) passes.
func TestCheckNamesEachProblemByPath(t *testing.T) {
	for _, c := range []struct {
		typ  models.EventType
		data string
		want []Problem // Message is not compared
	}{
		{models.EventTestCreated, `{"testId":7,"name":["x"]}`, []Problem{
			{Field: "data/name", Keyword: "/properties/name/type"},
			{Field: "data/testId", Keyword: "/properties/testId/type"}}},
		{models.EventTestCreated, `{"n":1,"seq":2,"note":"<b>"}`, nil},
		{models.EventTestUpdated, `{"projectId":null}`, []Problem{{Field: "data/projectId", Keyword: "/properties/projectId/type"}}},
		{models.EventTestUpdated, `{}`, nil},
		{models.EventTestDeleted, `{"testId":true}`, []Problem{{Field: "data/testId", Keyword: "/properties/testId/type"}}},
		{models.EventTestDeleted, `{"testId":"9f1c","extra":{"a":[1]}}`, nil},
		{models.EventTestsResultUpdated, `{"status":3}`, []Problem{{Field: "data/status", Keyword: "/properties/status/type"}}},
		{models.EventTestsResultUpdated, `{"testId":"bench","status":"passing"}`, nil},
		{models.EventWebhookDisabled, `{"reason":"tired"}`, []Problem{
			{Field: "data", Keyword: "/required"},
			{Field: "data/reason", Keyword: "/properties/reason/enum"}}},
		{models.EventWebhookDeliveryExhausted, `{"subscriptionId":"0882997e-3f1a-4d2b-9c5e-6a7b8c9d0e1f","eventId":1}`, []Problem{
			{Field: "data/eventId", Keyword: "/properties/eventId/type"}}},
		{models.EventWebhookDeliveryRecovered, `{"eventId":"5c2d8e7f-1a2b-4c3d-9e4f-5a6b7c8d9e0f"}`, []Problem{{Field: "data", Keyword: "/required"}}},
		{models.EventWebhookTest, `{"subscriptionId":"0882997e-3f1a-4d2b-9c5e-6a7b8c9d0e1f","message":false}`, []Problem{
			{Field: "data/message", Keyword: "/properties/message/type"}}},
	} {
		typ, ok := Lookup(c.typ)
		if !ok {
			t.Fatalf("%s is not in the catalogue", c.typ)
		}
		got := typ.Check(json.RawMessage(c.data))
		for i := range got {
			if got[i].Message == "" {
				t.Errorf("%s %s: problem %+v has no message", c.typ, c.data, got[i])
			}
			got[i].Message = ""
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.typ, c.data, got, c.want)
		}
	}
}

// A type outside the catalogue has no entry (the publish check refuses
// it before it asks).
func TestLookupUnknownType(t *testing.T) {
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup found an unknown type")
	}
}
