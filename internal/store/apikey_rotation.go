package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

// Rotate gives a visible key a new secret; the old one works for the grace
// period, never past expiry. The row lock serialises concurrent rotations.
func (k APIKeys) Rotate(ctx context.Context, p models.Principal, id uuid.UUID, rot models.APIKeyRotation) (models.APIKey, error) {
	now := pgTime(rot.Now)
	key, err := secret.NewAPIKey()
	if err != nil {
		return models.APIKey{}, err
	}
	var row apiKeyRow
	err = k.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&row).Apply(visible(p)).Where("id = ?", id).For("UPDATE").Scan(ctx)
		if err != nil {
			return notFoundAs(translate(err, nil), "API key")
		}
		if models.KeyStatusAt(now, row.ExpiresAt, nil) == models.KeyExpired {
			return models.ErrAPIKeyExpired
		}
		// A key rotating itself must present its current secret under the
		// lock, or a request authenticated just before another rotation could
		// rotate with a stale secret and lock the owner's new one out.
		if p.KeyID == id && !bytes.Equal(row.SecretHash, p.SecretHash) {
			return models.ErrPreviousSecret
		}
		if rot.SetExpiry {
			row.ExpiresAt = pgTimePtr(rot.ExpiresAt)
			if row.ExpiresAt != nil && !row.ExpiresAt.After(now) {
				return models.Invalid("expiresAt", "must be in the future")
			}
		}
		if bound := rot.MaxExpiresAt; bound != nil && (row.ExpiresAt == nil || row.ExpiresAt.After(*bound)) {
			return models.Invalid("expiresAt", "the rotated key would outlive the calling key, which expires at "+
				bound.UTC().Format(time.RFC3339Nano)+"; send an expiresAt no later than that")
		}
		row.PreviousSecretHash, row.PreviousKeyExpiresAt = nil, nil
		row.Status = string(models.KeyActive)
		if rot.Grace > 0 {
			until := now.Add(rot.Grace)
			if row.ExpiresAt != nil && row.ExpiresAt.Before(until) {
				until = *row.ExpiresAt
			}
			row.PreviousSecretHash, row.PreviousKeyExpiresAt = row.SecretHash, &until
			row.Status = string(models.KeyRotating)
		}
		row.SecretHash, row.SecureKey = key.Hash, key.Hint
		row.LastRotatedAt, row.DateUpdated = &now, now
		// The row is locked, so this is the next lifecycle number; the new
		// change starts without the last one's failures (bumpLifecycleSQL).
		row.LifecycleSeq++
		row.LifecycleTraceContext = traceColumn(tracing.FromContext(ctx))
		if row.LifecycleFailures > 0 {
			row.LifecycleFailures, row.LifecycleClaimedUntil = 0, nil
		}
		_, err = tx.NewUpdate().Model(&row).
			Column("secret_hash", "secure_key", "previous_secret_hash", "previous_key_expires_at",
				"status", "expires_at", "last_rotated_at", "date_updated", "lifecycle_seq",
				"lifecycle_failures", "lifecycle_claimed_until", "lifecycle_trace_context").
			WherePK().Exec(ctx)
		return translate(err, nil)
	})
	if err != nil {
		return models.APIKey{}, err
	}
	m := row.model()
	m.Secret = key.Secret
	return m, nil
}

// ApplyDueTransitions moves a key's stored state to what its timestamps say
// at now and returns the schedule. Being one conditional UPDATE, re-checked on
// the newest row version, a late call never undoes a newer rotation.
func (k APIKeys) ApplyDueTransitions(ctx context.Context, id uuid.UUID, now time.Time) (models.APIKeySchedule, error) {
	now = pgTime(now)
	res, err := k.db.NewRaw(`UPDATE api_keys SET
			status = CASE WHEN expires_at <= ?0 THEN 'expired'
				WHEN previous_key_expires_at > ?0 THEN 'rotating' ELSE 'active' END,
			previous_secret_hash = CASE WHEN previous_key_expires_at <= ?0 OR expires_at <= ?0
				THEN NULL ELSE previous_secret_hash END,
			previous_key_expires_at = CASE WHEN previous_key_expires_at <= ?0 OR expires_at <= ?0
				THEN NULL ELSE previous_key_expires_at END
		WHERE id = ?1 AND revoked_at IS NULL AND (
			previous_key_expires_at <= ?0 OR expires_at <= ?0 AND previous_secret_hash IS NOT NULL
			OR status <> CASE WHEN expires_at <= ?0 THEN 'expired'
				WHEN previous_key_expires_at > ?0 THEN 'rotating' ELSE 'active' END)`,
		now, id).Exec(ctx)
	if err != nil {
		return models.APIKeySchedule{}, translate(err, nil)
	}
	n, _ := res.RowsAffected()

	var row apiKeyRow
	err = k.db.NewSelect().Model(&row).
		Column("status", "expires_at", "previous_key_expires_at", "revoked_at").
		Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return models.APIKeySchedule{}, nil
	}
	if err != nil {
		return models.APIKeySchedule{}, translate(err, nil)
	}
	return models.APIKeySchedule{
		Found:                true,
		Revoked:              row.RevokedAt != nil,
		Status:               models.KeyStatus(row.Status),
		ExpiresAt:            row.ExpiresAt,
		PreviousKeyExpiresAt: row.PreviousKeyExpiresAt,
		Changed:              n > 0,
	}, nil
}
