package api

import (
	"errors"
	"testing"

	"github.com/openlayer-ai/workspace-service/models"
)

type decodeTarget struct {
	Name    *string          `json:"name"`
	Tags    []string         `json:"tags"`
	Enabled Optional[bool]   `json:"enabled"`
	Expiry  Optional[string] `json:"expiry"`
}

func TestDecodeObject(t *testing.T) {
	cases := []struct {
		name       string
		body       string
		wantCode   string   // "" for success
		wantFields []string // fields named in details, in order
	}{
		{"valid", `{"name":"a","tags":["x"],"enabled":false,"expiry":null}`, "", nil},
		{"empty object", `{}`, "", nil},
		{"names match exactly", `{"Name":"a"}`, "validation_failed", []string{"Name"}},
		{"a member appears once", `{"name":"a","name":"b"}`, "validation_failed", []string{"name"}},
		{"every problem at once", `{"name":5,"tags":"x","enabled":"yes","other":1}`, "validation_failed",
			[]string{"name", "tags", "enabled", "other"}},
		{"null body", `null`, "invalid_json", nil},
		{"array body", `[]`, "invalid_json", nil},
		{"empty body", ` `, "invalid_json", nil},
		{"invalid UTF-8", "{\"name\":\"bad\xff\"}", "invalid_json", nil},
		{"trailing data", `{} x`, "invalid_json", nil},
		{"malformed", `{"name":}`, "invalid_json", nil},
		{"truncated", `{"name":"a"`, "invalid_json", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dst decodeTarget
			err := decodeObject([]byte(c.body), &dst)
			if c.wantCode == "" {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				return
			}
			var me *models.Error
			if !errors.As(err, &me) || me.Code != c.wantCode || !errors.Is(err, models.ErrInvalid) {
				t.Fatalf("err = %#v, want code %s", err, c.wantCode)
			}
			var got []string
			for _, d := range me.Details {
				got = append(got, d.Field)
			}
			if len(got) != len(c.wantFields) {
				t.Fatalf("details %+v, want fields %v", me.Details, c.wantFields)
			}
			for i := range got {
				if got[i] != c.wantFields[i] {
					t.Fatalf("details %+v, want fields %v", me.Details, c.wantFields)
				}
			}
		})
	}
}

func TestDecodeObjectFillsFields(t *testing.T) {
	var dst decodeTarget
	if err := decodeObject([]byte(`{"name":"a","tags":["x","y"],"enabled":null}`), &dst); err != nil {
		t.Fatal(err)
	}
	if dst.Name == nil || *dst.Name != "a" || len(dst.Tags) != 2 || !dst.Enabled.Set || dst.Enabled.Valid || dst.Expiry.Set {
		t.Fatalf("decoded %+v", dst)
	}
}
