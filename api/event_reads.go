package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/openlayer-ai/workspace-service/models"
)

// listEvents is GET .../events: the workspace's events, newest first,
// without recipients (GET .../events/{eventId} has them), filtered as the
// portal's Messages page filters them: by type, time, recipient
// subscription and a recipient's delivery status.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	var v models.Validation
	q := query(r, &v)
	f := models.EventFilter{WorkspaceID: principal(r).WorkspaceID, Page: pageParams(q, &v)}
	if t := oneParam(q, "type", &v); t != "" {
		// webhook.test is listed too: it is stored and delivered like any
		// other event, though no subscription takes it by type.
		if typ := models.EventType(t); typ.Valid() || typ == models.EventWebhookTest {
			f.Type = typ
		} else {
			v.Add("type", "must be one of "+models.EventTypeList()+", "+string(models.EventWebhookTest))
		}
	}
	switch st := models.DeliveryStatus(oneParam(q, "status", &v)); st {
	case "":
	case models.DeliverySucceeded, models.DeliveryFailed, models.DeliveryPending:
		f.Status = st
	default:
		v.Add("status", "must be succeeded, failed or pending")
	}
	if raw := oneParam(q, "webhookId", &v); raw != "" {
		if id, ok := parseID(raw); ok {
			f.SubscriptionID = &id
		} else {
			v.Add("webhookId", "must be a webhook subscription id (a UUID in its 36-character form)")
		}
	}
	f.Since = timeParam(q, "since", &v)
	f.Until = timeParam(q, "until", &v)
	if f.Since != nil && f.Until != nil && f.Since.After(*f.Until) {
		v.Add("until", "must not be before since (since is inclusive, until exclusive)")
	}
	if err := v.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Reserve the worst page before reading; trim to the real one after.
	res, err := s.pages.reserve(r.Context(), eventPageWorstCost(f.Page.PerPage))
	if err != nil {
		if r.Context().Err() == nil { // not a caller that left while waiting
			s.log.WarnContext(r.Context(), "event page budget full: GET events answered 503",
				slog.String("requestId", requestIDFrom(r.Context())), slog.Int("perPage", f.Page.PerPage))
		}
		w.Header().Set("Retry-After", "1")
		s.writeError(w, r, err)
		return
	}
	defer res.release()
	page, err := s.store.Events().List(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res.trim(eventPageCost(page.Items))
	writePage(w, http.StatusOK, page)
}

// eventDetailResponse always carries recipients, [] when there are none:
// models.EventDetail omits them so that list items can leave them out.
type eventDetailResponse struct {
	models.EventDetail
	Recipients []models.EventRecipient `json:"recipients"`
}

// getEvent is GET .../events/{eventId}: the event and each recipient's
// delivery status. Another workspace's event is 404, like a missing one.
func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "eventId", "event")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, err := s.store.Events().Detail(r.Context(), principal(r).WorkspaceID, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := eventDetailResponse{EventDetail: ev, Recipients: ev.Recipients}
	if out.Recipients == nil {
		out.Recipients = []models.EventRecipient{}
	}
	writeJSON(w, http.StatusOK, out)
}

// deliveryFilter reads the status and eventId filters. pending asks for
// the deliveries with no outcome yet, which have no record to filter.
func deliveryFilter(q url.Values, v *models.Validation) (f models.DeliveryFilter, pending bool) {
	switch status := oneParam(q, "status", v); models.DeliveryStatus(status) {
	case "":
	case models.DeliverySucceeded:
		f.Success = new(true)
	case models.DeliveryFailed:
		f.Success = new(false)
	case models.DeliveryPending:
		pending = true
	default:
		v.Add("status", "must be succeeded, failed or pending")
	}
	if raw := oneParam(q, "eventId", v); raw != "" {
		if id, ok := parseID(raw); ok {
			f.EventID = &id
		} else {
			v.Add("eventId", "must be an event id (a UUID in its 36-character form)")
		}
	}
	return f, pending
}

// oneParam reads a query parameter sent at most once; "" when absent.
func oneParam(q url.Values, name string, v *models.Validation) string {
	raw := q[name]
	if len(raw) > 1 {
		v.Add(name, "must be sent once")
		return ""
	}
	if len(raw) == 0 {
		return ""
	}
	return raw[0]
}

// timeParam reads an RFC 3339 date-time query parameter; nil when absent.
func timeParam(q url.Values, name string, v *models.Validation) *time.Time {
	raw := oneParam(q, name, v)
	if raw == "" {
		return nil
	}
	t, err := models.ParseInstant(raw)
	switch {
	case err != nil:
		v.Add(name, "must be an RFC 3339 date-time such as 2026-11-23T10:00:00Z (send a + in an offset as %2B)")
		return nil
	case t.UTC().Year() < 1:
		// PostgreSQL has no year 0.
		v.Add(name, "must be in year 1 or later (UTC)")
		return nil
	}
	return &t
}
