package api_test

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"
)

// api_key_lifecycle_events_total counts each change the API commits; a
// refused change counts nothing.
func TestMetricsKeyLifecycleEvents(t *testing.T) {
	h := newHarness(t)
	admin := h.admin.Secret
	var key struct {
		ID string `json:"id"`
	}
	for range 3 {
		h.doJSON(http.MethodPost, h.keysPath(), admin, map[string]any{"name": "k"}, http.StatusCreated, &key)
	}
	// Refused: expiresAt in the past.
	h.doJSON(http.MethodPost, h.keysPath(), admin, map[string]any{"name": "k", "expiresAt": "2001-01-01T00:00:00Z"}, http.StatusBadRequest, nil)
	h.doJSON(http.MethodPost, h.keysPath(key.ID, "rotate"), admin, nil, http.StatusOK, nil)
	h.doJSON(http.MethodDelete, h.keysPath(key.ID), admin, nil, http.StatusNoContent, nil)
	// Refused: the key is revoked.
	h.doJSON(http.MethodPost, h.keysPath(key.ID, "rotate"), admin, nil, http.StatusNotFound, nil)

	body := h.do(http.MethodGet, "/metrics", "", nil).Body.String()
	want := map[string]float64{"created": 3, "rotated": 1, "revoked": 1}
	for event, n := range want {
		re := regexp.MustCompile(`(?m)^api_key_lifecycle_events_total\{event="` + event + `"\} (\S+)$`)
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("no api_key_lifecycle_events_total{event=%q} in /metrics", event)
			continue
		}
		if got, _ := strconv.ParseFloat(m[1], 64); got != n {
			t.Errorf("api_key_lifecycle_events_total{event=%q} = %v, want %v", event, got, n)
		}
	}
}
