package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/tracing"
	"github.com/openlayer-ai/workspace-service/models"
)

// APIKeys reads and writes the keys visible to a caller (its own, or all if
// admin; never revoked ones); an invisible key is treated as absent.
type APIKeys struct {
	db bun.IDB
}

// APIKeys returns the API key queries.
func (s *Store) APIKeys() APIKeys { return APIKeys{db: s.db} }

// visible restricts q to the keys the caller may see and manage.
func visible(p models.Principal) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("workspace_id = ? AND revoked_at IS NULL", p.WorkspaceID).
			Where("(user_id = ? OR ?)", p.UserID, p.IsAdmin())
	}
}

func pgTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := pgTime(*t)
	return &v
}

// errAPIKeyLimit ends Create's transaction when the workspace is at its cap.
var errAPIKeyLimit = errors.New("store: API key limit reached")

// Create issues a new key unless the workspace holds in.Cap unrevoked keys;
// only the returned key carries the secret, which is stored as a hash.
func (k APIKeys) Create(ctx context.Context, in models.NewAPIKey) (models.APIKey, error) {
	key, err := secret.NewAPIKey()
	if err != nil {
		return models.APIKey{}, err
	}
	now := pgTime(in.Now)
	row := apiKeyRow{
		ID:          uuid.New(),
		WorkspaceID: in.WorkspaceID,
		UserID:      in.UserID,
		Name:        in.Name,
		SecureKey:   key.Hint,
		SecretHash:  key.Hash,
		Status:      string(models.KeyActive),
		ExpiresAt:   pgTimePtr(in.ExpiresAt),
		DateCreated: now,
		DateUpdated: now,
	}
	if row.ExpiresAt != nil {
		row.LifecycleSeq = 1 // its workflow must hear of the expiry
		row.LifecycleTraceContext = traceColumn(tracing.FromContext(ctx))
	}
	err = k.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		full, err := atCap(ctx, tx, in.WorkspaceID, in.Cap,
			`SELECT count(*) FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL`)
		if err != nil {
			return err
		}
		if full {
			return errAPIKeyLimit
		}
		_, err = tx.NewInsert().Model(&row).Exec(ctx)
		return err
	})
	if errors.Is(err, errAPIKeyLimit) {
		return models.APIKey{}, models.Conflict("api_key_limit_reached",
			fmt.Sprintf("this workspace has %d API keys, the most it may have; revoke one first (expired keys count until revoked)", in.Cap))
	}
	if err != nil {
		return models.APIKey{}, translate(err, nil)
	}
	m := row.model()
	m.Secret = key.Secret
	return m, nil
}

// List returns the caller's visible keys, newest first, unpaginated (a
// workspace has few keys).
func (k APIKeys) List(ctx context.Context, p models.Principal) ([]models.APIKey, error) {
	var rows []apiKeyRow
	err := k.db.NewSelect().Model(&rows).
		Apply(visible(p)).
		OrderExpr("date_created DESC, id DESC").
		Scan(ctx)
	if err != nil {
		return nil, translate(err, nil)
	}
	keys := make([]models.APIKey, len(rows))
	for i, r := range rows {
		keys[i] = r.model()
	}
	return keys, nil
}

// Get returns one visible key.
func (k APIKeys) Get(ctx context.Context, p models.Principal, id uuid.UUID) (models.APIKey, error) {
	var row apiKeyRow
	err := k.db.NewSelect().Model(&row).Apply(visible(p)).Where("id = ?", id).Scan(ctx)
	if err != nil {
		return models.APIKey{}, notFoundAs(translate(err, nil), "API key")
	}
	return row.model(), nil
}

// Rename sets a visible key's name (nil removes it).
func (k APIKeys) Rename(ctx context.Context, p models.Principal, id uuid.UUID, name *string, now time.Time) (models.APIKey, error) {
	var row apiKeyRow
	_, err := k.db.NewUpdate().Model(&row).
		Set("name = ?, date_updated = ?", name, pgTime(now)).
		Where("id = ? AND workspace_id = ? AND revoked_at IS NULL", id, p.WorkspaceID).
		Where("(user_id = ? OR ?)", p.UserID, p.IsAdmin()).
		Returning("*").
		Exec(ctx, &row)
	if err != nil {
		return models.APIKey{}, notFoundAs(translate(err, nil), "API key")
	}
	return row.model(), nil
}

// Revoke ends every secret of a visible key at once; the row is kept for
// audit, hidden from every read.
func (k APIKeys) Revoke(ctx context.Context, p models.Principal, id uuid.UUID, now time.Time) error {
	now = pgTime(now)
	res, err := k.db.NewRaw(`UPDATE api_keys
		SET revoked_at = ?, previous_secret_hash = NULL, previous_key_expires_at = NULL, date_updated = ?,
			`+bumpLifecycleSQL("?")+`
		WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL AND (user_id = ? OR ?)`,
		now, now, lifecycleTrace(ctx), id, p.WorkspaceID, p.UserID, p.IsAdmin()).Exec(ctx)
	if err != nil {
		return translate(err, nil)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return models.NotFound("API key")
	}
	return nil
}

// notFoundAs names the resource in a bare not-found error.
func notFoundAs(err error, resource string) error {
	if err == models.ErrNotFound {
		return models.NotFound(resource)
	}
	return err
}
