package api

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/models"
)

// pascal is a type's name in component names: tests.result.updated →
// TestsResultUpdated.
func pascal(name models.EventType) string {
	var b strings.Builder
	for _, part := range strings.Split(string(name), ".") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// openAPIRaw is api/openapi.json as plain JSON values, so schemas compare
// member for member with the catalogue's files.
func openAPIRaw(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func plain(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The catalogue, the OpenAPI document and the publish check are one
// source: every type's <Type>Data component is its catalogue schema, the
// webhooks section delivers each type (and no other) with that schema and
// the catalogue's example, the type enums list the catalogue, and the
// publish check refuses what the document's schema refuses.
func TestOpenAPIEventTypesAreTheCatalogue(t *testing.T) {
	loadOpenAPI(t) // valid OpenAPI 3.1, webhooks included
	doc := openAPIRaw(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	webhooks, _ := doc["webhooks"].(map[string]any)

	var names, publishable []string
	for _, typ := range eventtypes.All() {
		names = append(names, string(typ.Name))
		if typ.Publishable {
			publishable = append(publishable, string(typ.Name))
		}
		data := pascal(typ.Name) + "Data"
		if !reflect.DeepEqual(schemas[data], plain(t, typ.Schema)) {
			t.Errorf("components/schemas/%s is not catalogue/%s.json's schema", data, typ.Name)
		}
		delivery, _ := schemas[pascal(typ.Name)+"Delivery"].(map[string]any)
		props, _ := delivery["properties"].(map[string]any)
		if ref := props["data"]; !reflect.DeepEqual(ref, map[string]any{"$ref": "#/components/schemas/" + data}) {
			t.Errorf("%sDelivery's data is %v, want a reference to %s", pascal(typ.Name), ref, data)
		}
		if c := props["type"]; !reflect.DeepEqual(c, map[string]any{"type": "string", "const": string(typ.Name)}) {
			t.Errorf("%sDelivery's type is %v, want the constant %s", pascal(typ.Name), c, typ.Name)
		}

		post, _ := webhooks[string(typ.Name)].(map[string]any)["post"].(map[string]any)
		if post == nil {
			t.Errorf("webhooks has no %s", typ.Name)
			continue
		}
		if d, _ := post["description"].(string); !strings.HasPrefix(d, typ.Description) || !strings.Contains(d, typ.Version) {
			t.Errorf("webhooks/%s: description %q, want the catalogue's description and version", typ.Name, d)
		}
		media := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
		if ref := media["schema"]; !reflect.DeepEqual(ref, map[string]any{"$ref": "#/components/schemas/" + pascal(typ.Name) + "Delivery"}) {
			t.Errorf("webhooks/%s: body schema %v", typ.Name, ref)
		}
		example, _ := media["example"].(map[string]any)
		if example["type"] != string(typ.Name) || !reflect.DeepEqual(example["data"], plain(t, typ.Example)) {
			t.Errorf("webhooks/%s: example %v, want the catalogue's example", typ.Name, example)
		}
	}
	var hooks []string
	for name := range webhooks {
		hooks = append(hooks, name)
	}
	sort.Strings(hooks)
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(hooks, want) {
		t.Errorf("webhooks %v, want the catalogue %v", hooks, want)
	}
	for component, want := range map[string][]string{"StoredEventType": names, "PublishableEventType": publishable, "EventType": names[:len(names)-1]} {
		var got []string
		for _, v := range schemas[component].(map[string]any)["enum"].([]any) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("components/schemas/%s enum %v, want %v", component, got, want)
		}
	}

	// The publish check: each publishable type's example from the document
	// passes, and a number where the document's schema says string is
	// refused at that member's path.
	for _, name := range publishable {
		typ := models.EventType(name)
		media := webhooks[name].(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
		example, _ := json.Marshal(media["example"].(map[string]any)["data"])
		if _, err := (publishEventRequest{Type: &name, Data: example}).validate(models.Principal{}); err != nil {
			t.Errorf("%s: the document's example is refused: %v", name, err)
		}
		props := schemas[pascal(typ)+"Data"].(map[string]any)["properties"].(map[string]any)
		for _, member := range slices.Sorted(maps.Keys(props)) {
			if props[member].(map[string]any)["type"] != "string" {
				continue
			}
			_, err := publishEventRequest{Type: &name, Data: json.RawMessage(`{"` + member + `":12345}`)}.validate(models.Principal{})
			var e *models.Error
			if !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "data/"+member {
				t.Errorf("%s with %s a number: %v, want one problem at data/%s", name, member, err, member)
			}
		}
	}
}
