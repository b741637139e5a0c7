package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
)

// RotateSecret gives a subscription of the workspace a new sealed signing
// secret. The current one becomes the previous secret until now() + grace
// (the database's clock, the one AttemptState compares with), and
// deliveries sign with both meanwhile. A previous secret still in its grace
// period is replaced, so it stops at once: at most two secrets ever sign.
// A zero grace drops the current secret at once too.
//
// It is one UPDATE, whose SET expressions all read the row as it was: two
// rotations racing each other run one after the other on the row lock, and
// the second sees the first's secret as the current one. It returns when
// the previous secret expires (nil with a zero grace). The rotation is
// pending for the subscription's WebhookSecret workflow until the relay
// has told it (SecretChange).
func (w Webhooks) RotateSecret(ctx context.Context, workspaceID, id uuid.UUID, sealed []byte, grace time.Duration) (*time.Time, error) {
	var out struct {
		ExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	}
	keep := grace > 0
	err := w.db.NewRaw(`UPDATE webhook_subscriptions SET
			previous_secret_ciphertext = CASE WHEN ?0 THEN secret_ciphertext END,
			previous_secret_expires_at = CASE WHEN ?0 THEN now() + make_interval(secs => ?1) END,
			secret_ciphertext = ?2,
			lifecycle_seq = lifecycle_seq + 1,
			date_updated = now()
		WHERE id = ?3 AND workspace_id = ?4
		RETURNING previous_secret_expires_at`,
		keep, grace.Seconds(), sealed, id, workspaceID).Scan(ctx, &out)
	if err != nil {
		return nil, webhookNotFound(translate(err, nil))
	}
	return out.ExpiresAt, nil
}

// PreviousSecretState is what ClearExpiredPreviousSecret leaves.
type PreviousSecretState struct {
	Found bool // false: the subscription no longer exists
	// ExpiresAt is when the remaining previous secret expires; nil when
	// there is none.
	ExpiresAt *time.Time
	Cleared   bool // this call erased an expired previous secret
}

// ClearExpiredPreviousSecret erases the subscription's previous secret if
// it expired at or before now. The condition is in the UPDATE, which
// PostgreSQL re-checks on the newest row version if a rotation commits
// meanwhile, so a late or repeated call never erases a newer rotation's
// previous secret. It reports what is left. Deliveries stop signing with an
// expired secret at its expiry whether or not this has run (AttemptState);
// this only keeps it from lingering in the table.
func (w Webhooks) ClearExpiredPreviousSecret(ctx context.Context, id uuid.UUID, now time.Time) (PreviousSecretState, error) {
	res, err := w.db.NewRaw(`UPDATE webhook_subscriptions
		SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL
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

// ClearExpiredPreviousSecrets erases up to limit previous secrets that
// expired before cutoff, whichever the subscription: the retention sweep's
// backstop for rotations whose timer workflow could not be started.
func (w Webhooks) ClearExpiredPreviousSecrets(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := w.db.NewRaw(`UPDATE webhook_subscriptions
		SET previous_secret_ciphertext = NULL, previous_secret_expires_at = NULL
		WHERE id IN (SELECT id FROM webhook_subscriptions WHERE previous_secret_expires_at <= ?0 LIMIT ?1)
		AND previous_secret_expires_at <= ?0`, pgTime(cutoff), limit).Exec(ctx)
	if err != nil {
		return 0, translate(err, nil)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
