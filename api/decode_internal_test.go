package api

import (
	"errors"
	"net/http/httptest"
	"strings"
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

// Where every member is optional, no body, {} and null all mean "nothing
// given"; where a body is required, null is refused like any non-object.
func TestDecodeOptionalBody(t *testing.T) {
	for _, body := range []string{"", " \n", "{}", "null", " null\n"} {
		var dst decodeTarget
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if err := decodeOptionalBody(r, &dst); err != nil || dst.Name != nil || dst.Expiry.Set {
			t.Errorf("optional body %q: %+v, %v; want nothing set", body, dst, err)
		}
		r = httptest.NewRequest("POST", "/", strings.NewReader(body))
		if err := decode(r, &dst); body != "{}" && !errors.Is(err, models.ErrInvalid) {
			t.Errorf("required body %q: err = %v, want invalid_json", body, err)
		}
	}
	for _, body := range []string{"nul", "[]", `"null"`, "null null"} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		if err := decodeOptionalBody(r, new(decodeTarget)); !errors.Is(err, models.ErrInvalid) {
			t.Errorf("optional body %q: err = %v, want invalid_json", body, err)
		}
	}
}
