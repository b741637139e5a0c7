package portal

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

// deliveriesPerPage is the one endpoint page's page size.
const deliveriesPerPage = 25

// endpointView is the one endpoint page: the subscription, its attempts
// under the filter, and its latest recovery, if any.
type endpointView struct {
	Sub models.WebhookSubscription
	// Health is the success rate over healthWindow, as the list shows it.
	Health string
	// PublicKey is a v1a endpoint's, which its receiver verifies with.
	PublicKey  *models.WebhookPublicKey
	Deliveries models.Page[models.WebhookDelivery]
	// Pending is the page when the filter is status=pending: deliveries
	// with no outcome yet have no attempt record to list.
	Pending  models.Page[models.PendingDelivery]
	Status   string
	EventID  string
	Recovery *models.WebhookRecovery
	// RecoveryNote says why no recovery is shown when one may exist.
	RecoveryNote string
	// WatchNote says why the page stopped reloading itself.
	WatchNote    string
	Pager        pager
	SinceDefault string
}

// The page reloads itself while it waits for a test event's attempt or a
// recovery, for a bounded time: a worker that is down, or an event no
// attempt will ever follow, must not keep a tab reloading for the
// session's life.
const (
	watchTestFor       = time.Minute
	watchRedeliveryFor = time.Minute
	watchRecoveryFor   = 10 * time.Minute
)

// pager is the page links under a list: "" at either end. A page past
// the last (an old or edited address) leads to the last one (Past, Last).
type pager struct {
	Prev, Next         string
	PrevText, NextText string
	Page, TotalPages   int
	Past               bool
	Last               string
}

// showEndpoint lists the endpoint's attempts newest first, filtered by
// outcome and event like GET .../deliveries; status=pending lists instead
// the events whose delivery has no outcome yet, which have no record.
func (p *Portal) showEndpoint(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	v := endpointView{Sub: sub, Status: q.Get("status"), EventID: q.Get("eventId"),
		SinceDefault: p.now().UTC().Add(-24 * time.Hour).Format(sinceLayout)}
	var (
		f    models.DeliveryFilter
		errs []models.FieldError
	)
	switch models.DeliveryStatus(v.Status) {
	case "":
	case models.DeliverySucceeded:
		f.Success = new(true)
	case models.DeliveryFailed:
		f.Success = new(false)
	case models.DeliveryPending:
	default:
		errs = append(errs, models.FieldError{Field: "status", Message: "choose succeeded, failed or pending"})
	}
	if v.EventID != "" {
		if id, ok := parseID(v.EventID); ok {
			f.EventID = &id
		} else {
			errs = append(errs, models.FieldError{Field: "eventId", Message: "must be an event id (a UUID in its 36-character form)"})
		}
	}
	sums, err := p.store.Deliveries().Summaries(r.Context(), sessionOf(r).WorkspaceID, []uuid.UUID{sub.ID}, p.now().Add(-healthWindow))
	if err != nil {
		p.fail(w, r, err)
		return
	}
	v.Health = successRate(sums[sub.ID])
	if sub.SignatureScheme == models.SignatureV1a {
		pk, err := p.store.Webhooks().PublicKey(r.Context(), sessionOf(r).WorkspaceID, sub.ID)
		if err != nil {
			p.fail(w, r, err)
			return
		}
		v.PublicKey = &pk
	}
	page := models.PageRequest{Page: pageNumber(q), PerPage: deliveriesPerPage}
	switch {
	case len(errs) > 0:
	case v.Status == string(models.DeliveryPending):
		v.Pending, err = p.store.Deliveries().Pending(r.Context(), sessionOf(r).WorkspaceID, sub.ID, f.EventID, page)
		v.Pager = pageLinks(q, v.Pending.Meta, "Newer", "Older")
	default:
		v.Deliveries, err = p.store.Deliveries().ListFiltered(r.Context(), sessionOf(r).WorkspaceID, sub.ID, f, page)
		v.Pager = pageLinks(q, v.Deliveries.Meta, "Newer", "Older")
	}
	if err != nil {
		p.fail(w, r, err)
		return
	}
	rec, err := p.ops.Recovery(r.Context(), sessionOf(r).WorkspaceID, sub.ID, w.Header().Get("X-Request-Id"))
	switch {
	case err == nil:
		v.Recovery = &rec
	case errors.Is(err, webhookops.ErrTemporalUnavailable):
		v.RecoveryNote = "The progress of recoveries cannot be read right now."
	}
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusBadRequest
	}
	// Watch a test event arrive, and a recovery run, for a while.
	refresh := false
	if q.Get("notice") == "test" && f.EventID != nil && v.Deliveries.Meta.TotalItems == 0 && len(errs) == 0 {
		ev, err := p.store.Events().Get(r.Context(), *f.EventID)
		if err == nil && ev.WorkspaceID == sessionOf(r).WorkspaceID && p.now().Sub(ev.DateCreated) < watchTestFor {
			refresh = true
		} else {
			v.WatchNote = "No attempt of this test event was recorded within " + inWords(watchTestFor) +
				", so this page stopped reloading itself. Deliveries may be held up; reload the page later, or list the pending deliveries."
		}
	}
	if q.Get("notice") == "redeliver" && f.EventID != nil && v.Status == "" && v.Deliveries.Meta.Page == 1 && len(errs) == 0 {
		if watch, note := p.watchRedelivery(q, v.Deliveries.Items); watch {
			refresh = true
		} else {
			v.WatchNote = note
		}
	}
	if rec := v.Recovery; rec != nil && rec.State == models.RecoveryRunning {
		if p.now().Sub(rec.StartedAt) < watchRecoveryFor {
			refresh = true
		} else {
			v.RecoveryNote = "The recovery has run for more than " + inWords(watchRecoveryFor) + ", so this page no longer reloads itself; reload it to follow the recovery."
		}
	}
	p.pages.render(w, r, status, "endpoint", view{Title: "Endpoint " + sub.URL, Errors: errs,
		Notice: notices[q.Get("notice")], Refresh: refresh, Data: v})
}

// pageLinks are the addresses of the previous and next pages, "" at the
// ends, under the words of the list (newer and older attempts, say).
func pageLinks(q url.Values, m models.PageMeta, prevText, nextText string) pager {
	p := pager{Page: m.Page, TotalPages: m.TotalPages, PrevText: prevText, NextText: nextText}
	link := func(n int) string {
		c := url.Values{}
		for k, vs := range q {
			if k != "page" && k != "notice" {
				c[k] = vs
			}
		}
		c.Set("page", strconv.Itoa(n))
		return "?" + c.Encode()
	}
	if m.Page > max(m.TotalPages, 1) {
		p.Past, p.Last = true, link(max(m.TotalPages, 1))
		return p
	}
	if m.Page > 1 {
		p.Prev = link(m.Page - 1)
	}
	if m.Page < m.TotalPages {
		p.Next = link(m.Page + 1)
	}
	return p
}

// sendTest sends a webhook.test event to the endpoint and shows the page
// filtered to it, where its attempt appears.
func (p *Portal) sendTest(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	accepted, err := p.ops.SendTest(r.Context(), p.store, sessionOf(r).WorkspaceID, sub.ID)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.outbox.Poke(store.OutboxEvents)
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"?notice=test&eventId="+accepted.EventID.String())
}

// redeliver asks for a new attempt and shows the page filtered to the
// event, which follows it: the address carries the latest attempt number
// before the request (after) and its time (at), so the page reloads
// until a later attempt is there (watchRedelivery).
func (p *Portal) redeliver(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	ws := sessionOf(r).WorkspaceID
	eventID, _ := parseID(mux.Vars(r)["eventId"]) // uuid.Nil reads as not found
	latest, err := p.store.Deliveries().ListFiltered(r.Context(), ws, sub.ID, models.DeliveryFilter{EventID: &eventID}, models.PageRequest{Page: 1, PerPage: 1})
	if err != nil {
		p.fail(w, r, err)
		return
	}
	after := 0
	if len(latest.Items) > 0 {
		after = latest.Items[0].AttemptNumber
	}
	at := p.now()
	if _, err := p.ops.Redeliver(r.Context(), ws, sub.ID, eventID, "portal:"+w.Header().Get("X-Request-Id"), ""); err != nil {
		p.fail(w, r, err)
		return
	}
	q := url.Values{"notice": {"redeliver"}, "eventId": {eventID.String()},
		"after": {strconv.Itoa(after)}, "at": {strconv.FormatInt(at.Unix(), 10)}}
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"?"+q.Encode())
}

// watchRedelivery says whether the page, filtered to a redelivered event
// (its newest attempts first), still waits for the attempt after the
// address's "after", asked for at "at"; if not, why it stopped, or ""
// when the attempt is there. An address edited to a time far off (either
// way) is watched no longer than one that is true.
func (p *Portal) watchRedelivery(q url.Values, attempts []models.WebhookDelivery) (watch bool, note string) {
	after, err := strconv.Atoi(q.Get("after"))
	if err != nil || after < 0 {
		return false, ""
	}
	if len(attempts) > 0 && attempts[0].AttemptNumber > after {
		return false, ""
	}
	at, err := strconv.ParseInt(q.Get("at"), 10, 64)
	if err == nil && p.now().Sub(time.Unix(at, 0)).Abs() < watchRedeliveryFor {
		return true, ""
	}
	return false, "No new attempt of this event was recorded within " + inWords(watchRedeliveryFor) +
		" of the redelivery, so this page stopped reloading itself. It may be held up; reload the page later."
}
