package eventtypes

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/openlayer-ai/workspace-service/models"
)

// Problem is one way a data object breaks its type's schema.
type Problem struct {
	// Field is "data" and the JSON Pointer of the value within it, as
	// in data/status ("data" alone for the object itself).
	Field string
	// Keyword is the JSON Pointer of the failing keyword in the type's
	// schema, as in /properties/status/type.
	Keyword string
	Message string
}

// maxProblems bounds a refusal; models.Validation keeps 20 details.
const maxProblems = 20

func compile(name models.EventType, schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "urn:eventtypes:" + string(name)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Check validates data, a JSON object already within models.EventDataMax,
// against the schema of t. The work is bounded by data's size times the
// schema's keywords (Go's regexp, which patterns would use, is linear).
func (t Type) Check(data json.RawMessage) []Problem {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []Problem{{Field: "data", Message: "is not JSON"}}
	}
	err = t.compiled.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return nil
	}
	var out []Problem
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || len(out) == maxProblems {
			continue
		}
		out = append(out, Problem{Field: "data" + u.InstanceLocation, Keyword: u.KeywordLocation, Message: u.Error.String()})
	}
	slices.SortFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Keyword, b.Keyword))
	})
	return out
}
