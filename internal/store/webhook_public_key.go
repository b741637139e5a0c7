package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/models"
)

// errNoPublicKey answers a public-key read of a v1 subscription: it exists,
// but its scheme has no public key, which a 404 would hide.
var errNoPublicKey = models.Conflict("signature_scheme_v1",
	`this subscription signs with "v1" (HMAC-SHA256 with its whsec_ secret) and has no public key; create a subscription with "signatureScheme": "v1a" for ed25519 signatures`)

// PublicKey reads a v1a subscription's public key and, while a rotation's
// grace period lasts by the database's clock, the previous one.
func (w Webhooks) PublicKey(ctx context.Context, workspaceID, id uuid.UUID) (models.WebhookPublicKey, error) {
	var row struct {
		PublicKey         *string    `bun:"public_key"`
		PreviousPublicKey *string    `bun:"previous_public_key"`
		PreviousExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	}
	err := w.db.NewRaw(`SELECT public_key,
			CASE WHEN previous_secret_expires_at > now() THEN previous_public_key END AS previous_public_key,
			CASE WHEN previous_secret_expires_at > now() AND previous_public_key IS NOT NULL THEN previous_secret_expires_at END AS previous_secret_expires_at
		FROM webhook_subscriptions WHERE id = ? AND workspace_id = ?`, id, workspaceID).Scan(ctx, &row)
	if err != nil {
		return models.WebhookPublicKey{}, webhookNotFound(translate(err, nil))
	}
	if row.PublicKey == nil {
		return models.WebhookPublicKey{}, errNoPublicKey
	}
	return models.WebhookPublicKey{PublicKey: *row.PublicKey, PreviousPublicKey: row.PreviousPublicKey,
		PreviousExpiresAt: row.PreviousExpiresAt}, nil
}
