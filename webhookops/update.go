package webhookops

import (
	"context"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

var errNoSecretKeyForHeaders = &models.Error{
	Kind: models.ErrUnavailable, Code: "webhook_secrets_unavailable",
	Message: "sensitive headers cannot be stored: the server has no WEBHOOK_SECRET_KEY to encrypt them with",
}

// Update applies a validated update through st, sealing the values of
// sensitive headers first.
func (o *Ops) Update(ctx context.Context, st *store.Store, ws, id uuid.UUID, u models.WebhookUpdate) (models.WebhookSubscription, error) {
	if u.Headers != nil {
		var err error
		if u.Headers, err = o.sealHeaders(id, u.Headers); err != nil {
			return models.WebhookSubscription{}, err
		}
	}
	return st.Webhooks().Update(ctx, ws, id, u)
}

// sealHeaders encrypts each sensitive value bound to the subscription and
// the name (secret.WebhookHeaderBinding), and clears the plain value; a
// masked one (Keep) is left for the store to take from the row.
func (o *Ops) sealHeaders(id uuid.UUID, hs []models.WebhookHeader) ([]models.WebhookHeader, error) {
	out := make([]models.WebhookHeader, len(hs))
	for i, h := range hs {
		if h.Sensitive && !h.Keep {
			if o.Secrets == nil {
				return nil, errNoSecretKeyForHeaders
			}
			sealed, err := o.Secrets.Seal([]byte(h.Value), secret.WebhookHeaderBinding(id, h.Name))
			if err != nil {
				return nil, err
			}
			h.Sealed, h.Value = sealed, ""
		}
		out[i] = h
	}
	return out, nil
}
