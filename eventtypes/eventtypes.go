// Package eventtypes is the event-type catalogue: for each type a receiver
// may get, its description, version note, the JSON Schema (2020-12) of its
// data and an example. The catalogue is embedded JSON, one file per type,
// loaded once; the publish check, GET /v1/event-types, the portal's page and
// the test that holds api/openapi.json to it all read it from here.
package eventtypes

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/openlayer-ai/workspace-service/models"
)

//go:embed catalogue/*.json
var files embed.FS

// Type is one entry of the catalogue, in the shape GET /v1/event-types
// returns it.
type Type struct {
	Name        models.EventType `json:"name"`
	Description string           `json:"description"`
	Version     string           `json:"version"`
	// Publishable: clients may publish it (the webhook.* types are the
	// service's own).
	Publishable bool            `json:"publishable"`
	Schema      json.RawMessage `json:"schema"`
	Example     json.RawMessage `json:"example"`

	compiled *jsonschema.Schema
}

// catalogue is every type, in the order of models.EventTypes, then
// webhook.test.
type catalogue struct {
	types  []Type
	byName map[models.EventType]*Type
}

// load is the catalogue, read and compiled at first use. The files are
// part of the binary, so a broken one is a bug the package's tests catch;
// it panics rather than serve a partial catalogue.
var load = sync.OnceValue(func() catalogue {
	c, err := read()
	if err != nil {
		panic("eventtypes: " + err.Error())
	}
	return c
})

// Names is every type a receiver may get: the subscription catalogue
// (models.EventTypes) and webhook.test.
func Names() []models.EventType {
	return append(slices.Clone(models.EventTypes), models.EventWebhookTest)
}

func read() (catalogue, error) {
	c := catalogue{byName: map[models.EventType]*Type{}}
	for _, name := range Names() {
		raw, err := files.ReadFile("catalogue/" + string(name) + ".json")
		if err != nil {
			return c, fmt.Errorf("%s has no file: %w", name, err)
		}
		var t Type
		if err := json.Unmarshal(raw, &t); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		if t.Name != name {
			return c, fmt.Errorf("catalogue/%s.json names %q", name, t.Name)
		}
		if t.compiled, err = compile(name, t.Schema); err != nil {
			return c, fmt.Errorf("%s: the schema does not compile: %w", name, err)
		}
		t.Publishable = name.Publishable()
		c.types = append(c.types, t)
	}
	for i := range c.types {
		c.byName[c.types[i].Name] = &c.types[i]
	}
	return c, nil
}

// All returns every type of the catalogue.
func All() []Type {
	return slices.Clone(load().types)
}

// Lookup returns the type named name.
func Lookup(name models.EventType) (Type, bool) {
	t, ok := load().byName[name]
	if !ok {
		return Type{}, false
	}
	return *t, true
}
