package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// rateLimitPerSecond takes a whole number from 1 to the maximum, or null;
// the error for a number that is not one says so (it said "must be a
// number" to clients who had sent 1.5).
func TestWebhookRateLimitPerSecondValidation(t *testing.T) {
	h := newHarness(t, withWebhookKey)
	for _, raw := range []string{`1.5`, `1.0`, `1e3`, `9999999999999999999999`, `"2"`, `0`, `-1`, `1000001`} {
		body := `{"url":"https://example.com/in","eventTypes":["test.created"],"rateLimitPerSecond":` + raw + `}`
		rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body)
		var got struct {
			Error struct {
				Code   string `json:"code"`
				Fields []struct {
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &got)
		if rec.Code != http.StatusBadRequest || got.Error.Code != "validation_failed" || len(got.Error.Fields) != 1 ||
			got.Error.Fields[0].Field != "rateLimitPerSecond" {
			t.Errorf("rateLimitPerSecond %s: %d %s", raw, rec.Code, rec.Body)
			continue
		}
		if msg := got.Error.Fields[0].Message; strings.Contains(msg, "a number, or null") || strings.Contains(msg, "a number or null") {
			t.Errorf("rateLimitPerSecond %s: message %q calls a number not a number", raw, msg)
		}
	}
	for _, raw := range []string{`1`, `null`, `1000`} {
		body := `{"url":"https://example.com/in","eventTypes":["test.created"],"rateLimitPerSecond":` + raw + `}`
		if rec := h.do(http.MethodPost, h.hooksPath(), h.admin.Secret, body); rec.Code != http.StatusCreated {
			t.Errorf("rateLimitPerSecond %s: %d %s", raw, rec.Code, rec.Body)
		}
	}
}
