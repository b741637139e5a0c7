package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
)

// RotateSecret gives a subscription a new sealed signing secret (with its
// public key for v1a, nil for v1); the current one signs too until the
// returned expiry (now() + grace; nil for zero grace). At most two secrets
// ever sign, and being one UPDATE, racing rotations serialise on the row
// lock. A key of the other scheme matches no row: the scheme is fixed.
func (w Webhooks) RotateSecret(ctx context.Context, workspaceID, id uuid.UUID, sealed []byte, publicKey *string, grace time.Duration) (*time.Time, error) {
	var out struct {
		ExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	}
	keep := grace > 0
	err := w.db.NewRaw(`UPDATE webhook_subscriptions SET
			previous_secret_ciphertext = CASE WHEN ?0 THEN secret_ciphertext END,
			previous_secret_expires_at = CASE WHEN ?0 THEN now() + make_interval(secs => ?1) END,
			secret_ciphertext = ?2,
			previous_public_key = CASE WHEN ?0 THEN public_key END,
			public_key = ?5,
			`+bumpLifecycleSQL("?6")+`,
			date_updated = now()
		WHERE id = ?3 AND workspace_id = ?4 AND (public_key IS NULL) = (?5::text IS NULL)
		RETURNING previous_secret_expires_at`,
		keep, grace.Seconds(), sealed, id, workspaceID, publicKey, lifecycleTrace(ctx)).Scan(ctx, &out)
	if err != nil {
		return nil, webhookNotFound(translate(err, nil))
	}
	return out.ExpiresAt, nil
}

// PreviousSecretState is what ClearExpiredPreviousSecret leaves.
type PreviousSecretState struct {
	Found bool // false: the subscription no longer exists
	// ExpiresAt is when the remaining previous secret expires; nil if none.
	ExpiresAt *time.Time
	Cleared   bool // this call erased an expired previous secret
}

// ClearExpiredPreviousSecret erases the subscription's previous secret if it
// expired by now. PostgreSQL re-checks the UPDATE's condition on the newest
// row version, so a late call never erases a newer rotation's secret.
func (w Webhooks) ClearExpiredPreviousSecret(ctx context.Context, id uuid.UUID, now time.Time) (PreviousSecretState, error) {
	res, err := w.db.NewRaw(`UPDATE webhook_subscriptions
		SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL, previous_public_key = NULL
		WHERE id = ? AND previous_secret_expires_at <= ?`, id, pgTime(now)).Exec(ctx)
	if err != nil {
		return PreviousSecretState{}, translate(err, nil)
	}
	n, _ := res.RowsAffected()
	var row struct {
		ExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	}
	err = w.db.NewRaw(`SELECT previous_secret_expires_at FROM webhook_subscriptions WHERE id = ?`, id).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return PreviousSecretState{Cleared: n > 0}, nil
	}
	if err != nil {
		return PreviousSecretState{}, translate(err, nil)
	}
	return PreviousSecretState{Found: true, ExpiresAt: row.ExpiresAt, Cleared: n > 0}, nil
}

// ClearExpiredPreviousSecrets erases up to limit previous secrets expired
// before cutoff: the retention sweep's backstop for missed timers.
func (w Webhooks) ClearExpiredPreviousSecrets(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := w.db.NewRaw(`UPDATE webhook_subscriptions
		SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL, previous_public_key = NULL
		WHERE id IN (SELECT id FROM webhook_subscriptions WHERE previous_secret_expires_at <= ?0 LIMIT ?1)
		AND previous_secret_expires_at <= ?0`, pgTime(cutoff), limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
