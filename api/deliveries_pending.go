package api

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// pendingDelivery is an item of GET .../deliveries?status=pending: an
// event whose delivery to the subscription has no outcome yet, so no
// record; its status tells it from a record.
type pendingDelivery struct {
	EventID          uuid.UUID             `json:"eventId"`
	EventDateCreated time.Time             `json:"eventDateCreated"`
	Status           models.DeliveryStatus `json:"status"`
	Attempts         int                   `json:"attempts"`
	LastStatusCode   *int                  `json:"lastStatusCode"`
	NextAttemptAt    *time.Time            `json:"nextAttemptAt"`
}

// listPendingDeliveries answers GET .../deliveries?status=pending: the
// subscription's pending deliveries, newest event first, as the portal's
// endpoint page lists them.
func (s *Server) listPendingDeliveries(w http.ResponseWriter, r *http.Request, id uuid.UUID, eventID *uuid.UUID, page models.PageRequest) {
	ws := principal(r).WorkspaceID
	if _, err := s.store.Webhooks().Get(r.Context(), ws, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	list, err := s.store.Deliveries().Pending(r.Context(), ws, id, eventID, page)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	items := make([]pendingDelivery, len(list.Items))
	for i, p := range list.Items {
		items[i] = pendingDelivery{EventID: p.EventID, EventDateCreated: p.EventDateCreated, Status: models.DeliveryPending,
			Attempts: p.Attempts, LastStatusCode: p.LastStatusCode, NextAttemptAt: p.NextAttemptAt}
	}
	writePage(w, http.StatusOK, models.Page[pendingDelivery]{Meta: list.Meta, Items: items})
}
