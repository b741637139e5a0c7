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

// newKey is a new signing secret: the shown part (the whsec_ secret of v1,
// the whpk_ public key of v1a) and the sealed secret the worker signs with.
type newKey struct {
	secret, publicKey *string
	sealed            []byte
}

// newSealedSecret makes a signing secret of the scheme and seals it bound
// to the subscription id, so a ciphertext copied onto another row does not
// open. A v1a private key is sealed like a secret and never shown.
func (o *Ops) newSealedSecret(id uuid.UUID, scheme models.SignatureScheme, unavailable error) (newKey, error) {
	if o.Secrets == nil {
		return newKey{}, unavailable
	}
	var k newKey
	var plain string
	if scheme == models.SignatureV1a {
		whsk, whpk, err := secret.NewWebhookKeyPair()
		if err != nil {
			return newKey{}, err
		}
		plain, k.publicKey = whsk, &whpk
	} else {
		whsec, err := secret.NewWebhookSecret()
		if err != nil {
			return newKey{}, err
		}
		plain, k.secret = whsec, &whsec
	}
	var err error
	k.sealed, err = o.Secrets.Seal([]byte(plain), id[:])
	return k, err
}

// Create stores a validated subscription through st (the pool or the
// request's transaction) and returns its secret or public key, the secret
// to be shown once.
func (o *Ops) Create(ctx context.Context, st *store.Store, in models.NewWebhook) (models.WebhookCreated, error) {
	id := uuid.New()
	k, err := o.newSealedSecret(id, in.SignatureScheme, errNoSecretKey)
	if err != nil {
		return models.WebhookCreated{}, err
	}
	if in.Headers, err = o.sealHeaders(id, in.Headers); err != nil {
		return models.WebhookCreated{}, err
	}
	in.PublicKey = k.publicKey
	if _, err := st.Webhooks().Create(ctx, id, in, k.sealed, o.Config.WebhookMaxSubscriptions); err != nil {
		return models.WebhookCreated{}, err
	}
	return models.WebhookCreated{ID: id, SignatureScheme: in.SignatureScheme, Secret: deref(k.secret), PublicKey: deref(k.publicKey)}, nil
}

// RotateSecret gives the subscription a new signing secret (v1a: key pair)
// of its scheme, the secret to be shown once. Until the grace period ends
// deliveries are signed with both, so a receiver can switch at any moment;
// a rotation during a grace period stops the oldest secret at once. The
// caller pokes store.OutboxWebhookSecrets once st's work has committed.
func (o *Ops) RotateSecret(ctx context.Context, st *store.Store, ws, id uuid.UUID, grace time.Duration) (models.WebhookSecretRotated, error) {
	if o.Secrets == nil {
		return models.WebhookSecretRotated{}, errNoSecretKeyToRotate
	}
	sub, err := st.Webhooks().Get(ctx, ws, id)
	if err != nil {
		return models.WebhookSecretRotated{}, err
	}
	k, err := o.newSealedSecret(id, sub.SignatureScheme, errNoSecretKeyToRotate)
	if err != nil {
		return models.WebhookSecretRotated{}, err
	}
	expires, err := st.Webhooks().RotateSecret(ctx, ws, id, k.sealed, k.publicKey, grace)
	if err != nil {
		return models.WebhookSecretRotated{}, err
	}
	return models.WebhookSecretRotated{Secret: deref(k.secret), PublicKey: deref(k.publicKey), PreviousSecretExpiresAt: expires}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
