package portal

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

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
// webhookops and leads to the page that shows the signing secret, once.
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
	// The form makes v1 subscriptions, which always have a secret.
	if created.Secret != "" {
		p.stashSecret(w, r, created.ID, stashCreated, created.Secret)
	}
	redirect(w, "/portal/endpoints/"+created.ID.String()+"/created")
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
