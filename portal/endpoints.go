package portal

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/internal/webhookops"
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
func (e endpointRow) Rate() string {
	pct, ok := e.Summary.SuccessRate()
	if !ok {
		return "no attempts"
	}
	return strconv.FormatFloat(pct, 'f', 1, 64) + "% of " + strconv.Itoa(e.Summary.Attempts)
}

// notices are the fixed texts a redirect may ask a page to show, so no
// text of the address is ever echoed.
var notices = map[string]string{
	"deleted":   "The endpoint was deleted.",
	"updated":   "The endpoint was saved.",
	"enabled":   "The endpoint was enabled.",
	"disabled":  "The endpoint was disabled: it receives nothing until enabled.",
	"test":      "A test event was sent. Its attempt appears below once made.",
	"redeliver": "A new attempt was requested. It appears below once made; reload to see it.",
	"recover":   "Recovery started: every failed delivery in the window is attempted again.",
}

func (p *Portal) listEndpoints(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	page := models.PageRequest{Page: 1, PerPage: 100}
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 {
		page.Page = n
	}
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
			Rows []endpointRow
			Meta models.PageMeta
		}{rows, list.Meta}})
}

// endpointForm is the create and edit form as sent and as shown again.
type endpointForm struct {
	ID          uuid.UUID
	URL         string
	Description string
	EventTypes  []models.EventType
	RateLimit   string
	Enabled     bool
}

// IsNew reports whether the form creates an endpoint rather than edits one.
func (f endpointForm) IsNew() bool { return f.ID == uuid.Nil }

func readEndpointForm(r *http.Request) endpointForm {
	f := endpointForm{
		URL:         r.PostForm.Get("url"),
		Description: r.PostForm.Get("description"),
		RateLimit:   strings.TrimSpace(r.PostForm.Get("rateLimitPerSecond")),
		Enabled:     r.PostForm.Get("enabled") == "true",
	}
	for _, t := range r.PostForm["eventTypes"] {
		f.EventTypes = append(f.EventTypes, models.EventType(t))
	}
	return f
}

// rateLimit reads the optional rate field: "" is no limit; a number goes
// to the shared rule (webhookops.CheckRateLimit).
func (f endpointForm) rateLimit(v *models.Validation) *int {
	if f.RateLimit == "" {
		return nil
	}
	n, err := strconv.Atoi(f.RateLimit)
	if err != nil {
		v.Add("rateLimitPerSecond", "must be a whole number, or empty for no limit")
		return nil
	}
	return &n
}

func eventTypeStrings(ts []models.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func (p *Portal) newEndpoint(w http.ResponseWriter, r *http.Request) {
	p.pages.render(w, r, http.StatusOK, "endpoint_form", view{Title: "Add an endpoint", Data: endpointForm{Enabled: true}})
}

// createEndpoint validates with the API's rules, creates through
// webhookops and shows the signing secret, once.
func (p *Portal) createEndpoint(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	f := readEndpointForm(r)
	var v models.Validation
	fields := webhookops.NewWebhookFields{URL: &f.URL, EventTypes: eventTypeStrings(f.EventTypes), Description: &f.Description, Enabled: &f.Enabled}
	fields.RateLimitPerSecond = f.rateLimit(&v)
	in, err := fields.Validate(s.WorkspaceID, derefID(s.CreatedBy), p.cfg.WebhookAllowPrivateNetworks)
	if err = joinValidation(&v, err); err != nil {
		p.formError(w, r, "endpoint_form", "Add an endpoint", f, err)
		return
	}
	created, err := p.ops.Create(r.Context(), p.store, in)
	if err != nil {
		p.formError(w, r, "endpoint_form", "Add an endpoint", f, err)
		return
	}
	p.pages.render(w, r, http.StatusCreated, "secret", view{Title: "Endpoint created", Data: secretView{
		EndpointID: created.ID, Secret: created.Secret,
		Intro: "The endpoint was created. Copy its signing secret now: it is shown only once.",
	}})
}

// secretView shows a signing secret once.
type secretView struct {
	EndpointID        uuid.UUID
	Secret            string
	Intro             string
	PreviousExpiresAt *time.Time
}

// derefID is the session's minting user, the creator of what it makes;
// uuid.Nil (recorded as no creator) once that user is deleted.
func derefID(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

// joinValidation merges the form's own messages with the shared rules'.
func joinValidation(v *models.Validation, err error) error {
	var me *models.Error
	if errors.As(err, &me) {
		for _, d := range me.Details {
			v.Add(d.Field, d.Message)
		}
		if len(me.Details) == 0 {
			return err
		}
	} else if err != nil {
		return err
	}
	return v.Err()
}

// formError shows a form again with what was sent and why it was refused;
// errors other than validation get the error page.
func (p *Portal) formError(w http.ResponseWriter, r *http.Request, page, title string, f endpointForm, err error) {
	var me *models.Error
	if !errors.As(err, &me) || (!errors.Is(err, models.ErrInvalid) && !errors.Is(err, models.ErrConflict)) {
		p.fail(w, r, err)
		return
	}
	errs := me.Details
	if len(errs) == 0 {
		errs = []models.FieldError{{Message: me.Message}}
	}
	p.pages.render(w, r, models.HTTPStatus(err), page, view{Title: title, Errors: errs, Data: f})
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

func parseID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

func (p *Portal) editEndpoint(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	f := endpointForm{ID: sub.ID, URL: sub.URL, Description: sub.Description, EventTypes: sub.EventTypes, Enabled: sub.Enabled}
	if sub.RateLimitPerSecond != nil {
		f.RateLimit = strconv.Itoa(*sub.RateLimitPerSecond)
	}
	p.pages.render(w, r, http.StatusOK, "endpoint_form", view{Title: "Edit endpoint", Data: f})
}

// updateEndpoint saves the edit form: every field, through the API's rules.
func (p *Portal) updateEndpoint(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	f := readEndpointForm(r)
	f.ID, f.Enabled = sub.ID, sub.Enabled
	var v models.Validation
	u := models.WebhookUpdate{RateLimitPerSecond: models.OptionalInt{Set: true}}
	url := webhookops.CheckURL(f.URL, p.cfg.WebhookAllowPrivateNetworks, &v)
	desc := webhookops.CheckDescription(f.Description, &v)
	u.URL, u.Description = &url, &desc
	u.EventTypes = webhookops.CheckEventTypes(eventTypeStrings(f.EventTypes), &v)
	if n := f.rateLimit(&v); n != nil {
		u.RateLimitPerSecond.Value = webhookops.CheckRateLimit(*n, &v)
	}
	if err := v.Err(); err != nil {
		p.formError(w, r, "endpoint_form", "Edit endpoint", f, err)
		return
	}
	if _, err := p.store.Webhooks().Update(r.Context(), sessionOf(r).WorkspaceID, sub.ID, u); err != nil {
		p.formError(w, r, "endpoint_form", "Edit endpoint", f, err)
		return
	}
	redirect(w, "/portal/endpoints/"+sub.ID.String()+"?notice=updated")
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

// rotateSecret gives the endpoint a new signing secret, shown once, with
// the grace period chosen (webhookops.Ops.RotateSecret).
func (p *Portal) rotateSecret(w http.ResponseWriter, r *http.Request) {
	sub, err := p.subscription(r)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	var hours *float64
	if raw := r.PostForm.Get("gracePeriodHours"); raw != "" {
		h, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			p.fail(w, r, models.Invalid("gracePeriodHours", "must be a whole number of hours"))
			return
		}
		hours = &h
	}
	grace, err := webhookops.GracePeriod(hours, nil)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	rotated, err := p.ops.RotateSecret(r.Context(), p.store, sessionOf(r).WorkspaceID, sub.ID, grace)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.outbox.Poke(store.OutboxWebhookSecrets)
	p.pages.render(w, r, http.StatusOK, "secret", view{Title: "Signing secret rotated", Data: secretView{
		EndpointID: sub.ID, Secret: rotated.Secret, PreviousExpiresAt: rotated.PreviousSecretExpiresAt,
		Intro: "The endpoint has a new signing secret. Copy it now: it is shown only once.",
	}})
}

// redirect answers a form with 303, so reloading the next page does not
// send the form again.
func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusSeeOther)
}
