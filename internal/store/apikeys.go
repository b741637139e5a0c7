package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

type apiKeyRow struct {
	bun.BaseModel        `bun:"table:api_keys"`
	ID                   uuid.UUID  `bun:"id,pk"`
	WorkspaceID          uuid.UUID  `bun:"workspace_id"`
	UserID               uuid.UUID  `bun:"user_id"`
	Name                 *string    `bun:"name"`
	SecureKey            string     `bun:"secure_key"`
	SecretHash           []byte     `bun:"secret_hash"`
	PreviousSecretHash   []byte     `bun:"previous_secret_hash"`
	Status               string     `bun:"status"`
	ExpiresAt            *time.Time `bun:"expires_at"`
	PreviousKeyExpiresAt *time.Time `bun:"previous_key_expires_at"`
	LastRotatedAt        *time.Time `bun:"last_rotated_at"`
	DateLastUsed         *time.Time `bun:"date_last_used"`
	RevokedAt            *time.Time `bun:"revoked_at"`
	DateCreated          time.Time  `bun:"date_created"`
	DateUpdated          time.Time  `bun:"date_updated"`

	LifecycleSeq          int64      `bun:"lifecycle_seq"`
	LifecycleSyncedSeq    int64      `bun:"lifecycle_synced_seq"`
	LifecycleClaimedUntil *time.Time `bun:"lifecycle_claimed_until"`
	LifecycleFailures     int        `bun:"lifecycle_failures"`
	// LifecycleTraceContext: the trace of the last change (bumpLifecycleSQL).
	LifecycleTraceContext traceColumn `bun:"lifecycle_trace_context,type:jsonb,nullzero"`
}

func (r apiKeyRow) model() models.APIKey {
	return models.APIKey{
		ID:                   r.ID,
		Name:                 r.Name,
		DateCreated:          r.DateCreated,
		DateUpdated:          r.DateUpdated,
		DateLastUsed:         r.DateLastUsed,
		SecureKey:            r.SecureKey,
		Status:               models.KeyStatus(r.Status),
		ExpiresAt:            r.ExpiresAt,
		LastRotatedAt:        r.LastRotatedAt,
		PreviousKeyExpiresAt: r.PreviousKeyExpiresAt,
		WorkspaceID:          r.WorkspaceID,
		UserID:               r.UserID,
	}
}

// CredentialByHash finds the key whose current or previous secret has the
// SHA-256 hash, with its owner's role; an ex-member's key is not found.
func (s *Store) CredentialByHash(ctx context.Context, hash []byte) (models.KeyCredential, error) {
	var c models.KeyCredential
	var role string
	err := s.db.NewRaw(`SELECT k.id, k.workspace_id, k.user_id, m.role, k.secret_hash, k.previous_secret_hash,
			k.expires_at, k.previous_key_expires_at, k.revoked_at, k.date_last_used
		FROM api_keys k
		JOIN workspace_members m ON m.workspace_id = k.workspace_id AND m.user_id = k.user_id
		WHERE k.secret_hash = ? OR k.previous_secret_hash = ?
		LIMIT 1`, hash, hash).Scan(ctx,
		&c.KeyID, &c.WorkspaceID, &c.UserID, &role, &c.SecretHash, &c.PreviousSecretHash,
		&c.ExpiresAt, &c.PreviousKeyExpiresAt, &c.RevokedAt, &c.DateLastUsed)
	if err != nil {
		return models.KeyCredential{}, translate(err, nil)
	}
	c.Role = models.Role(role)
	return c, nil
}

// TouchLastUsed records use of a key at most once a minute, reporting whether
// it wrote.
func (s *Store) TouchLastUsed(ctx context.Context, keyID uuid.UUID, at time.Time) (bool, error) {
	res, err := s.db.NewRaw(`UPDATE api_keys SET date_last_used = ?
		WHERE id = ? AND (date_last_used IS NULL OR date_last_used <= ?)`,
		at, keyID, at.Add(-time.Minute)).Exec(ctx)
	if err != nil {
		return false, translate(err, nil)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
