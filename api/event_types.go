package api

import (
	"net/http"

	"github.com/openlayer-ai/workspace-service/eventtypes"
)

// eventTypeList is the answer of GET /v1/event-types.
type eventTypeList struct {
	Items []eventtypes.Type `json:"items"`
}

// listEventTypes answers the catalogue to any key: it is the same for every
// workspace, and a key keeps the route behind authentication and the
// per-key read budget like every other /v1 read.
func (s *Server) listEventTypes(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, eventTypeList{Items: eventtypes.All()})
}
