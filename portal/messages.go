package portal

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// messagesPerPage is the Messages page's page size, as the attempts'.
const messagesPerPage = deliveriesPerPage

// messagesView is the Messages page: the workspace's events under the
// filter, each with its recipients' status.
type messagesView struct {
	Events models.Page[models.EventDetail]
	// Endpoints name the recipients and fill the endpoint filter.
	Endpoints                            []models.WebhookSubscription
	URLs                                 map[uuid.UUID]string
	Endpoint, Type, Status, Since, Until string
	Filtered                             bool
	Pager                                pager
	// More says more events match than the pages reach
	// (store.MessagesCountCap), Reach how many they do; Total is the
	// caption's count.
	More         bool
	Total, Reach string
}

// listMessages lists the workspace's events newest first, filtered by
// endpoint, type, recipient status and time, 25 a page.
func (p *Portal) listMessages(w http.ResponseWriter, r *http.Request) {
	ws := sessionOf(r).WorkspaceID
	q := r.URL.Query()
	v := messagesView{Endpoint: q.Get("endpoint"), Type: q.Get("type"), Status: q.Get("status"),
		Since: strings.TrimSpace(q.Get("since")), Until: strings.TrimSpace(q.Get("until"))}
	v.Filtered = v.Endpoint != "" || v.Type != "" || v.Status != "" || v.Since != "" || v.Until != ""
	f, errs := readMessageFilter(v)
	f.WorkspaceID = ws
	f.Page = models.PageRequest{Page: pageNumber(q), PerPage: messagesPerPage}

	// The list page of endpoints holds at most 100: enough to name them.
	subs, err := p.store.Webhooks().List(r.Context(), ws, models.PageRequest{Page: 1, PerPage: 100})
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v.Endpoints, v.URLs = subs.Items, make(map[uuid.UUID]string, len(subs.Items))
	for _, s := range subs.Items {
		v.URLs[s.ID] = s.URL
	}
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusBadRequest
	} else {
		if v.Events, v.More, err = p.store.Events().Messages(r.Context(), f); err != nil {
			p.fail(w, r, err)
			return
		}
		v.Total = plural(v.Events.Meta.TotalItems, "event")
		if v.More {
			v.Reach = thousands(store.MessagesCountCap)
			v.Total = "More than " + v.Reach + " events"
		}
		v.Pager = pageLinks(q, v.Events.Meta, "Newer", "Older")
	}
	p.pages.render(w, r, status, "messages", view{Title: "Messages", Errors: errs, Data: v})
}

// readMessageFilter reads the Messages page's filters, with messages in
// the form's words. An endpoint of another workspace is not refused: it
// matches no event, as a deleted one does.
func readMessageFilter(v messagesView) (models.EventFilter, []models.FieldError) {
	var (
		f    models.EventFilter
		errs []models.FieldError
	)
	if v.Endpoint != "" {
		if id, ok := parseID(v.Endpoint); ok {
			f.SubscriptionID = &id
		} else {
			errs = append(errs, models.FieldError{Field: "endpoint", Message: "choose an endpoint from the list"})
		}
	}
	if v.Type != "" {
		if !contains(models.EventTypes, models.EventType(v.Type)) {
			errs = append(errs, models.FieldError{Field: "type", Message: "choose an event type from the list"})
		}
		f.Type = models.EventType(v.Type)
	}
	switch s := models.DeliveryStatus(v.Status); s {
	case "":
	case models.DeliverySucceeded, models.DeliveryFailed, models.DeliveryPending:
		f.Status = s
	default:
		errs = append(errs, models.FieldError{Field: "status", Message: "choose succeeded, failed or pending"})
	}
	at := func(field, raw string) *time.Time {
		if raw == "" {
			return nil
		}
		t, ok := parseUTC(raw)
		if !ok {
			errs = append(errs, models.FieldError{Field: field, Message: "write the time as year-month-day hours:minutes, 24-hour, in UTC, such as 2026-11-20 14:30"})
			return nil
		}
		return &t
	}
	f.Since, f.Until = at("since", v.Since), at("until", v.Until)
	if f.Since != nil && f.Until != nil && !f.Until.After(*f.Since) {
		errs = append(errs, models.FieldError{Field: "until", Message: "must be later than the time in Since"})
	}
	return f, errs
}

// thousands writes n with commas between its groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
