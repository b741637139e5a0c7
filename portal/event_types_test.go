package portal_test

import (
	"bytes"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/eventtypes"
)

// The event types page shows every type of the catalogue with its
// description, the JSON Schema of its data and the body a receiver gets
// for its example, both indented and rendered as text.
func TestEventTypesPageShowsTheCatalogue(t *testing.T) {
	h := newHarness(t)
	rec := h.opened(nil).do(http.MethodGet, "/portal/event-types", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	page := rec.Body.String()
	text := func(raw []byte) string {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		return template.HTMLEscapeString(buf.String())
	}
	for _, typ := range eventtypes.All() {
		example, _ := json.Marshal(map[string]any{"type": typ.Name, "timestamp": "2026-11-21T11:16:01.998213Z", "data": typ.Example})
		for what, want := range map[string]string{
			"heading":     `<h2 id="t-` + string(typ.Name) + `"><code>` + string(typ.Name) + `</code></h2>`,
			"description": template.HTMLEscapeString(typ.Description),
			"version":     template.HTMLEscapeString(typ.Version),
			"schema":      text(typ.Schema),
			"example":     template.HTMLEscapeString(`"type": "` + string(typ.Name) + `",`),
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks its %s %s", typ.Name, what, want)
			}
		}
		// The example body's data, member by member, in the indented body.
		var data map[string]any
		_ = json.Unmarshal(typ.Example, &data)
		for k, v := range data {
			line, _ := json.Marshal(v)
			if want := template.HTMLEscapeString(`"` + k + `": ` + string(line)); !strings.Contains(page, want) {
				t.Errorf("%s: the example lacks %s (body %s)", typ.Name, want, example)
			}
		}
	}
}
