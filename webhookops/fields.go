package webhookops

import (
	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// NewWebhookFields are the members of a subscription to create, nil when
// absent, as the API's JSON body and the portal's form both send them.
type NewWebhookFields struct {
	URL                *string
	EventTypes         []string
	Description        *string
	Enabled            *bool
	RateLimitPerSecond *int // nil: unlimited
	// Headers and SensitiveHeaders: nil when absent (no custom headers).
	Headers          []HeaderField
	SensitiveHeaders []string
	SignatureScheme  *string // nil: v1
}

// Validate applies the creation rules; enabled defaults to true.
func (f NewWebhookFields) Validate(workspaceID, creatorID uuid.UUID, allowPrivate bool) (models.NewWebhook, error) {
	var v models.Validation
	in := models.NewWebhook{WorkspaceID: workspaceID, CreatorID: creatorID, Enabled: true, SignatureScheme: models.SignatureV1}
	if f.URL == nil {
		v.Add("url", "is required")
	} else {
		in.URL = CheckURL(*f.URL, allowPrivate, &v)
	}
	if f.EventTypes == nil {
		v.Add("eventTypes", "is required: a non-empty array of event types ("+models.EventTypeList()+")")
	} else {
		in.EventTypes = CheckEventTypes(f.EventTypes, &v)
	}
	if f.Description != nil {
		in.Description = CheckDescription(*f.Description, &v)
	}
	if f.Enabled != nil {
		in.Enabled = *f.Enabled
	}
	if f.RateLimitPerSecond != nil {
		in.RateLimitPerSecond = CheckRateLimit(*f.RateLimitPerSecond, &v)
	}
	if f.Headers != nil || f.SensitiveHeaders != nil {
		in.Headers = CheckHeaders(f.Headers, f.SensitiveHeaders, false, &v)
	}
	if f.SignatureScheme != nil {
		in.SignatureScheme = CheckSignatureScheme(*f.SignatureScheme, &v)
	}
	return in, v.Err()
}
