// Package webhookops holds what the API and the consumer portal both do to
// a workspace's webhook subscriptions: the rules their fields obey and the
// actions of more than one step (create with a sealed secret, rotate it,
// send a test event, redeliver, recover). Both call it, so neither keeps a
// copy of a rule. Errors are models errors, for each caller to render.
//
// It sits at the top level beside api and portal, not under internal/,
// because it starts and signals Temporal workflows: internal/ holds only
// what workflows and activities may depend on, so imports point one way.
package webhookops

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/openlayer-ai/workspace-service/internal/config"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Ops performs the actions; its zero Secrets and Temporal answer 503.
type Ops struct {
	Config   config.Config
	Store    *store.Store
	Temporal client.Client
	// Secrets seals signing secrets; nil without WEBHOOK_SECRET_KEY.
	Secrets *secret.Box
	Log     *slog.Logger
}

var (
	errNoSecretKey = &models.Error{
		Kind: models.ErrUnavailable, Code: "webhook_secrets_unavailable",
		Message: "webhooks cannot be created: the server has no WEBHOOK_SECRET_KEY to encrypt signing secrets with",
	}
	errNoSecretKeyToRotate = &models.Error{
		Kind: models.ErrUnavailable, Code: "webhook_secrets_unavailable",
		Message: "signing secrets cannot be rotated: the server has no WEBHOOK_SECRET_KEY to encrypt them with",
	}
)

// newSealedSecret makes a signing secret and seals it bound to the
// subscription id, so a ciphertext copied onto another row does not open.
func (o *Ops) newSealedSecret(id uuid.UUID, unavailable error) (string, []byte, error) {
	if o.Secrets == nil {
		return "", nil, unavailable
	}
	whsec, err := secret.NewWebhookSecret()
	if err != nil {
		return "", nil, err
	}
	sealed, err := o.Secrets.Seal([]byte(whsec), id[:])
	return whsec, sealed, err
}

// Create stores a validated subscription through st (the pool or the
// request's transaction) and returns its secret, to be shown once.
func (o *Ops) Create(ctx context.Context, st *store.Store, in models.NewWebhook) (models.WebhookCreated, error) {
	id := uuid.New()
	whsec, sealed, err := o.newSealedSecret(id, errNoSecretKey)
	if err != nil {
		return models.WebhookCreated{}, err
	}
	if in.Headers, err = o.sealHeaders(id, in.Headers); err != nil {
		return models.WebhookCreated{}, err
	}
	if _, err := st.Webhooks().Create(ctx, id, in, sealed, o.Config.WebhookMaxSubscriptions); err != nil {
		return models.WebhookCreated{}, err
	}
	return models.WebhookCreated{ID: id, Secret: whsec}, nil
}

// RotateSecret gives the subscription a new signing secret, to be shown
// once. Until the grace period ends deliveries are signed with both, so a
// receiver can switch at any moment; a rotation during a grace period stops
// the oldest secret at once. The caller pokes store.OutboxWebhookSecrets
// once st's work has committed.
func (o *Ops) RotateSecret(ctx context.Context, st *store.Store, ws, id uuid.UUID, grace time.Duration) (models.WebhookSecretRotated, error) {
	whsec, sealed, err := o.newSealedSecret(id, errNoSecretKeyToRotate)
	if err != nil {
		return models.WebhookSecretRotated{}, err
	}
	expires, err := st.Webhooks().RotateSecret(ctx, ws, id, sealed, grace)
	if err != nil {
		return models.WebhookSecretRotated{}, err
	}
	return models.WebhookSecretRotated{Secret: whsec, PreviousSecretExpiresAt: expires}, nil
}

const testMessage = "This is a test event: your endpoint received and can verify webhooks from this workspace."

// SendTest stores a webhook.test event for the one subscription. It is
// delivered and recorded like any other event, whatever types the
// subscription takes; a disabled subscription is refused. The caller pokes
// store.OutboxEvents once st's work has committed.
func (o *Ops) SendTest(ctx context.Context, st *store.Store, ws, id uuid.UUID) (models.WebhookTestAccepted, error) {
	data, err := json.Marshal(map[string]string{"subscriptionId": id.String(), "message": testMessage})
	if err != nil {
		return models.WebhookTestAccepted{}, err
	}
	ev, err := st.Events().CreateTest(ctx, ws, id, data)
	if err != nil {
		return models.WebhookTestAccepted{}, err
	}
	return models.WebhookTestAccepted{EventID: ev.ID}, nil
}
