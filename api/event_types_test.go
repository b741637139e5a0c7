package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openlayer-ai/workspace-service/eventtypes"
	"github.com/openlayer-ai/workspace-service/models"
)

// Publishing data that breaks its type's schema is a 400 naming each
// problem by its path under data, with the schema keyword in the message;
// the type's example is accepted. One case per publishable type.
func TestPublishEventRefusesDataOutsideItsSchema(t *testing.T) {
	h := newHarness(t)
	for _, c := range []struct {
		typ    models.EventType
		data   string
		fields []string
	}{
		{models.EventTestCreated, `{"testId":7,"name":"Accuracy"}`, []string{"data/testId"}},
		{models.EventTestUpdated, `{"projectId":null,"name":{"en":"x"}}`, []string{"data/name", "data/projectId"}},
		{models.EventTestDeleted, `{"testId":["9f1c"]}`, []string{"data/testId"}},
		{models.EventTestsResultUpdated, `{"testId":"9f1c","status":3}`, []string{"data/status"}},
	} {
		t.Run(string(c.typ), func(t *testing.T) {
			rec := h.do(http.MethodPost, h.eventsPath(), h.admin.Secret, `{"type":"`+string(c.typ)+`","data":`+c.data+`}`)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", rec.Code, rec.Body)
			}
			e := checkError(t, rec, "validation_failed", c.fields[0])
			var fields []string
			for _, d := range e.Error.Details {
				fields = append(fields, d.Field)
				if !strings.Contains(d.Message, "(schema /properties/") {
					t.Errorf("%s: message %q does not name the schema keyword", d.Field, d.Message)
				}
			}
			if strings.Join(fields, " ") != strings.Join(c.fields, " ") {
				t.Errorf("details name %v, want %v", fields, c.fields)
			}

			typ, _ := eventtypes.Lookup(c.typ)
			body, _ := json.Marshal(map[string]any{"type": c.typ, "data": typ.Example})
			h.doJSON(http.MethodPost, h.eventsPath(), h.admin.Secret, body, http.StatusAccepted, nil)
		})
	}
	var n int
	if err := h.db.NewSelect().TableExpr("events").ColumnExpr("count(*)").Scan(context.Background(), &n); err != nil || n != 4 {
		t.Fatalf("%d events stored, want the 4 examples (%v)", n, err)
	}
}

// GET /v1/event-types answers the catalogue to any key, a member's too,
// and nothing without one.
func TestListEventTypes(t *testing.T) {
	h := newHarness(t)
	member := h.addKey(models.RoleMember)
	var got bytes.Buffer
	rec := h.do(http.MethodGet, "/v1/event-types", member.Secret, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d; body %s", rec.Code, rec.Body)
	}
	if err := json.Compact(&got, rec.Body.Bytes()); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(map[string]any{"items": eventtypes.All()})
	if got.String() != string(want) {
		t.Errorf("body %s\nwant %s", got.String(), want)
	}
	var list struct {
		Items []struct {
			Name        models.EventType `json:"name"`
			Publishable bool             `json:"publishable"`
		} `json:"items"`
	}
	hookDecode(t, rec.Body.Bytes(), &list)
	if len(list.Items) != len(models.EventTypes)+1 || list.Items[len(list.Items)-1].Name != models.EventWebhookTest || list.Items[0].Publishable != true {
		t.Errorf("items %+v, want every type of the catalogue and webhook.test", list.Items)
	}
	h.run([]apiCase{{name: "no key", method: http.MethodGet, url: "/v1/event-types", status: 401, wantCode: "missing_credentials"}})
}
