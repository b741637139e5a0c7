package api

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/openlayer-ai/workspace-service/models"
	"github.com/openlayer-ai/workspace-service/webhookops"
)

type createWebhookRequest struct {
	URL         *string  `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description *string  `json:"description"`
	Enabled     *bool    `json:"enabled"`
	// RateLimitPerSecond: absent or null is unlimited.
	RateLimitPerSecond Optional[int] `json:"rateLimitPerSecond"`
	// Headers and SensitiveHeaders: absent or null is none.
	Headers          *headerObject `json:"headers"`
	SensitiveHeaders []string      `json:"sensitiveHeaders"`
	// SignatureScheme: absent or null is v1.
	SignatureScheme *string `json:"signatureScheme"`
}

// validate applies the creation rules (webhookops.NewWebhookFields).
func (req createWebhookRequest) validate(p models.Principal, allowPrivate bool) (models.NewWebhook, error) {
	f := webhookops.NewWebhookFields{URL: req.URL, EventTypes: req.EventTypes, Description: req.Description, Enabled: req.Enabled,
		SensitiveHeaders: req.SensitiveHeaders, SignatureScheme: req.SignatureScheme}
	if req.Headers != nil {
		f.Headers = req.Headers.fields
	}
	if req.RateLimitPerSecond.Valid {
		f.RateLimitPerSecond = &req.RateLimitPerSecond.Value
	}
	return f.Validate(p.WorkspaceID, p.UserID, allowPrivate)
}

type updateWebhookRequest struct {
	URL         Optional[string]   `json:"url"`
	Description Optional[string]   `json:"description"`
	EventTypes  Optional[[]string] `json:"eventTypes"`
	Enabled     Optional[bool]     `json:"enabled"`
	// RateLimitPerSecond: null clears the limit.
	RateLimitPerSecond Optional[int] `json:"rateLimitPerSecond"`
	// Headers replace the custom headers (null: none), with SensitiveHeaders.
	Headers          Optional[headerObject] `json:"headers"`
	SensitiveHeaders Optional[[]string]     `json:"sensitiveHeaders"`
	// SignatureScheme is read only to refuse it by name: it is fixed at creation.
	SignatureScheme Optional[json.RawMessage] `json:"signatureScheme"`
}

var errEmptyUpdate = &models.Error{
	Kind: models.ErrInvalid, Code: "empty_update",
	Message: "send at least one of url, description, eventTypes, enabled, rateLimitPerSecond, headers",
}

// validate applies the same rules as create to the members present. Null
// clears description; the other members cannot be null.
func (req updateWebhookRequest) validate(allowPrivate bool) (models.WebhookUpdate, error) {
	var (
		v models.Validation
		u models.WebhookUpdate
	)
	if !req.URL.Set && !req.Description.Set && !req.EventTypes.Set && !req.Enabled.Set && !req.RateLimitPerSecond.Set &&
		!req.Headers.Set && !req.SensitiveHeaders.Set && !req.SignatureScheme.Set {
		return u, errEmptyUpdate
	}
	if req.SignatureScheme.Set {
		// Receivers verify with what the scheme gives them (a secret or a
		// public key), so a change would break every one at once; a new
		// subscription lets them move over while the old one still delivers.
		v.Add("signatureScheme", "cannot be changed: create a subscription with the scheme you want, move your receiver to it, then delete this one")
	}
	switch {
	case req.URL.Set && !req.URL.Valid:
		v.Add("url", "must not be null")
	case req.URL.Set:
		s := webhookops.CheckURL(req.URL.Value, allowPrivate, &v)
		u.URL = &s
	}
	if req.Description.Set {
		s := ""
		if req.Description.Valid {
			s = webhookops.CheckDescription(req.Description.Value, &v)
		}
		u.Description = &s
	}
	switch {
	case req.EventTypes.Set && !req.EventTypes.Valid:
		v.Add("eventTypes", "must not be null")
	case req.EventTypes.Set:
		u.EventTypes = webhookops.CheckEventTypes(req.EventTypes.Value, &v)
	}
	switch {
	case req.Enabled.Set && !req.Enabled.Valid:
		v.Add("enabled", "must not be null")
	case req.Enabled.Set:
		u.Enabled = &req.Enabled.Value
	}
	if req.RateLimitPerSecond.Set {
		u.RateLimitPerSecond.Set = true
		if req.RateLimitPerSecond.Valid {
			u.RateLimitPerSecond.Value = webhookops.CheckRateLimit(req.RateLimitPerSecond.Value, &v)
		}
	}
	switch {
	case req.SensitiveHeaders.Set && !req.Headers.Set:
		v.Add("sensitiveHeaders", "must be sent with headers: the two replace the custom headers together")
	case req.Headers.Set:
		// The mask keeps a stored sensitive value (webhookops.CheckHeaders).
		u.Headers = webhookops.CheckHeaders(req.Headers.Value.fields, req.SensitiveHeaders.Value, true, &v)
	}
	return u, v.Err()
}

// headerObject is a headers member: an object of header names to string
// values, read in order with repeated names kept, which encoding/json
// would merge, so that validation can refuse them.
type headerObject struct{ fields []webhookops.HeaderField }

var errHeaderObject = errors.New("headers must be an object of header names to string values")

// UnmarshalJSON is called only for a member that is present and not null.
func (h *headerObject) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errHeaderObject
	}
	h.fields = []webhookops.HeaderField{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errHeaderObject
		}
		name, _ := tok.(string)
		var value string
		if err := dec.Decode(&value); err != nil {
			return errHeaderObject
		}
		h.fields = append(h.fields, webhookops.HeaderField{Name: name, Value: value})
	}
	return nil
}
