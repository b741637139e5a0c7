package portal

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/models"
)

// healthWindow is the span of the endpoint list's success rate.
const healthWindow = 24 * time.Hour

// endpointRow is one subscription of the list with its recent health.
type endpointRow struct {
	models.WebhookSubscription
	Summary models.DeliverySummary
}

// Rate is the success rate over healthWindow as text.
func (e endpointRow) Rate() string { return successRate(e.Summary) }

// successRate counts events, not attempts: an event redelivered until it
// succeeded counts once, as a success; the attempts are told beside it.
func successRate(s models.DeliverySummary) string {
	pct, ok := s.SuccessRate()
	if !ok {
		return "no attempts"
	}
	return strconv.FormatFloat(pct, 'f', 1, 64) + "% of " + plural(s.Events, "event") + " succeeded (" + plural(s.Attempts, "attempt") + ")"
}

// plural is n with its noun, "1 event" or "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(n) + " " + noun + "s"
}

// notices are the fixed texts a redirect may ask a page to show, so no
// text of the address is ever echoed.
var notices = map[string]string{
	"deleted":   "The endpoint was deleted.",
	"updated":   "The endpoint was saved.",
	"enabled":   "The endpoint was enabled.",
	"disabled":  "The endpoint was disabled: it receives nothing until enabled.",
	"test":      "A test event was sent. Its attempt appears below once made.",
	"redeliver": "A new attempt was requested. It appears below once made.",
	"recover":   "Recovery started: every failed delivery in the window is attempted again.",
}

func (p *Portal) listEndpoints(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	page := models.PageRequest{Page: pageNumber(r.URL.Query()), PerPage: 100}
	list, err := p.store.Webhooks().List(r.Context(), s.WorkspaceID, page)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	ids := make([]uuid.UUID, len(list.Items))
	for i, sub := range list.Items {
		ids[i] = sub.ID
	}
	sums, err := p.store.Deliveries().Summaries(r.Context(), s.WorkspaceID, ids, p.now().Add(-healthWindow))
	if err != nil {
		p.fail(w, r, err)
		return
	}
	rows := make([]endpointRow, len(list.Items))
	for i, sub := range list.Items {
		rows[i] = endpointRow{WebhookSubscription: sub, Summary: sums[sub.ID]}
	}
	p.pages.render(w, r, http.StatusOK, "endpoints", view{Title: "Webhook endpoints", Notice: notices[r.URL.Query().Get("notice")],
		Data: struct {
			Rows  []endpointRow
			Meta  models.PageMeta
			Pager pager
		}{rows, list.Meta, pageLinks(r.URL.Query(), list.Meta, "Previous", "Next")}})
}

// subscription reads the path's subscription of the session's workspace;
// another workspace's reads as not found, as in the API.
func (p *Portal) subscription(r *http.Request) (models.WebhookSubscription, error) {
	id, ok := parseID(mux.Vars(r)["webhookId"])
	if !ok {
		return models.WebhookSubscription{}, models.NotFound("webhook subscription")
	}
	return p.store.Webhooks().Get(r.Context(), sessionOf(r).WorkspaceID, id)
}

// maxPage is the largest page number read, as the API's (page in
// api/params.go): any larger would overflow the query's offset.
const maxPage = 1<<31 - 1

// pageNumber reads the address's page number; a missing, malformed or
// out-of-range one is the first page.
func pageNumber(q url.Values) int {
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 0 && n <= maxPage {
		return n
	}
	return 1
}

func parseID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

func (p *Portal) setEnabled(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	enabled := r.PostForm.Get("enabled") == "true"
	if _, err := p.store.Webhooks().Update(r.Context(), sessionOf(r).WorkspaceID, sub.ID, models.WebhookUpdate{Enabled: &enabled}); err != nil {
		p.fail(w, r, err)
		return
	}
	notice := "disabled"
	if enabled {
		notice = "enabled"
	}
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"?notice="+notice)
}

func (p *Portal) confirmDelete(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.pages.render(w, r, http.StatusOK, "endpoint_delete", view{Title: "Delete endpoint", Data: sub})
}

func (p *Portal) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err == nil {
		err = p.store.Webhooks().Delete(r.Context(), sessionOf(r).WorkspaceID, sub.ID)
	}
	if err != nil {
		p.fail(w, r, err)
		return
	}
	redirect(w, "/portal/?notice=deleted")
}

// redirect answers a form with 303, so reloading the next page does not
// send the form again.
func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusSeeOther)
}
