package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// TestWritePageBytes: writePage's response is writeJSON's, byte for byte,
// so streaming changed nothing clients see.
func TestWritePageBytes(t *testing.T) {
	item := func(data string) models.EventDetail {
		return models.EventDetail{
			ID: uuid.New(), Type: models.EventTestCreated, Data: json.RawMessage(data),
			DateCreated: time.Date(2026, 11, 21, 11, 16, 2, 4113000, time.UTC),
		}
	}
	big := `{"s": "` + strings.Repeat("x<>&\u2028é", 20000) + `", "n": [1, 2.5, -3e2]}`
	req := models.PageRequest{Page: 2, PerPage: 3}
	cases := map[string]models.Page[models.EventDetail]{
		"empty":       models.NewPage[models.EventDetail](req, 0, nil),
		"nil items":   {Meta: models.PageMeta{Page: 1, PerPage: 25}},
		"one":         models.NewPage(req, 4, []models.EventDetail{item(`{"a": {"b": [1, 2]}}`)}),
		"several":     models.NewPage(req, 9, []models.EventDetail{item(`{}`), item(big), item(`{"html": "<script>&</script>"}`)}),
		"with recips": models.NewPage(req, 1, []models.EventDetail{{ID: uuid.New(), Data: json.RawMessage(`{}`), Recipients: []models.EventRecipient{{}}}}),
	}
	for name, page := range cases {
		want := httptest.NewRecorder()
		writeJSON(want, http.StatusOK, page)
		got := httptest.NewRecorder()
		writePage(got, http.StatusOK, page)
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("%s: %d %q, want %d %q", name, got.Code, got.Header().Get("Content-Type"), want.Code, want.Header().Get("Content-Type"))
		}
		if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			g, w := got.Body.String(), want.Body.String()
			t.Errorf("%s: body differs from writeJSON's\ngot  %.300q\nwant %.300q", name, g, w)
		}
	}
}

// TestWritePageUnencodable: a page writeJSON would answer 500 is answered
// 500 in the error shape, not a 200 with a broken body.
func TestWritePageUnencodable(t *testing.T) {
	page := models.NewPage(models.PageRequest{Page: 1, PerPage: 1}, 1,
		[]models.EventDetail{{Data: json.RawMessage(`{not json`)}})
	rec := httptest.NewRecorder()
	writePage(rec, http.StatusOK, page)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), `"internal_error"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
