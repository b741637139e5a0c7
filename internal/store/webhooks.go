package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/models"
)

type webhookRow struct {
	bun.BaseModel    `bun:"table:webhook_subscriptions"`
	ID               uuid.UUID  `bun:"id,pk"`
	WorkspaceID      uuid.UUID  `bun:"workspace_id"`
	CreatorID        *uuid.UUID `bun:"creator_id"`
	URL              string     `bun:"url"`
	Description      string     `bun:"description"`
	EventTypes       []string   `bun:"event_types,array"`
	Enabled          bool       `bun:"enabled"`
	SecretCiphertext []byte     `bun:"secret_ciphertext"`
	DateCreated      time.Time  `bun:"date_created"`
	DateUpdated      time.Time  `bun:"date_updated"`

	DisabledReason     *string    `bun:"disabled_reason"`
	DisabledAt         *time.Time `bun:"disabled_at"`
	RateLimitPerSecond *int       `bun:"rate_limit_per_second"`

	PreviousSecretCiphertext []byte     `bun:"previous_secret_ciphertext"`
	PreviousSecretExpiresAt  *time.Time `bun:"previous_secret_expires_at"`

	Headers storedHeaders `bun:"headers,type:jsonb"`

	SignatureScheme   string  `bun:"signature_scheme,nullzero"` // unset: the column default, v1
	PublicKey         *string `bun:"public_key"`
	PreviousPublicKey *string `bun:"previous_public_key"`
}

// webhookColumnList is every column the API shows: never a sealed secret,
// which only the delivery path reads, nor the health bookkeeping. Headers'
// sealed values are read only for their names: model shows the mask.
var webhookColumnList = []string{"id", "workspace_id", "creator_id", "url", "description", "event_types", "enabled",
	"date_created", "date_updated", "disabled_reason", "disabled_at", "rate_limit_per_second", "headers", "signature_scheme"}

var webhookColumns = strings.Join(webhookColumnList, ", ")

func (r webhookRow) model() models.WebhookSubscription {
	types := make([]models.EventType, len(r.EventTypes))
	for i, t := range r.EventTypes {
		types[i] = models.EventType(t)
	}
	headers, sensitive := models.HeadersView(r.Headers.headers())
	return models.WebhookSubscription{
		ID:          r.ID,
		WorkspaceID: r.WorkspaceID,
		URL:         r.URL,
		Description: r.Description,
		EventTypes:  types,
		Enabled:     r.Enabled,
		CreatorID:   r.CreatorID,
		DateCreated: r.DateCreated,
		DateUpdated: r.DateUpdated,

		DisabledReason:     (*models.DisabledReason)(r.DisabledReason),
		DisabledAt:         r.DisabledAt,
		RateLimitPerSecond: r.RateLimitPerSecond,
		Headers:            headers,
		SensitiveHeaders:   sensitive,
		SignatureScheme:    models.SignatureScheme(r.SignatureScheme),
	}
}

func eventTypeStrings(types []models.EventType) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = string(t)
	}
	return out
}

// Webhooks reads and writes webhook subscriptions, scoped by workspace.
type Webhooks struct{ db bun.IDB }

// Webhooks returns the subscription queries.
func (s *Store) Webhooks() Webhooks { return Webhooks{db: s.db} }

// ErrWebhookLimit is returned by Create when the workspace is at its cap.
var ErrWebhookLimit = errors.New("store: webhook subscription limit reached")

// Create inserts a subscription (its id bound to the secret) unless the
// workspace already has max (0: no cap); it locks as atCap does.
func (w Webhooks) Create(ctx context.Context, id uuid.UUID, in models.NewWebhook, secretCiphertext []byte, max int) (models.WebhookSubscription, error) {
	now := pgTime(time.Now())
	// uuid.Nil is no creator: a portal session whose minting user is gone.
	var creator *uuid.UUID
	if in.CreatorID != uuid.Nil {
		creator = &in.CreatorID
	}
	row := webhookRow{
		ID:               id,
		WorkspaceID:      in.WorkspaceID,
		CreatorID:        creator,
		URL:              in.URL,
		Description:      in.Description,
		EventTypes:       eventTypeStrings(in.EventTypes),
		Enabled:          in.Enabled,
		SecretCiphertext: secretCiphertext,
		DateCreated:      now,
		DateUpdated:      now,

		RateLimitPerSecond: in.RateLimitPerSecond,
		Headers:            storedHeadersOf(in.Headers),
		SignatureScheme:    string(in.SignatureScheme),
		PublicKey:          in.PublicKey,
	}
	err := w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if max > 0 {
			if _, err := tx.NewRaw(`SELECT 1 FROM workspaces WHERE id = ? FOR NO KEY UPDATE`, in.WorkspaceID).Exec(ctx); err != nil {
				return err
			}
			var n int
			err := tx.NewRaw(`SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = ?`, in.WorkspaceID).Scan(ctx, &n)
			if err != nil {
				return err
			}
			if n >= max {
				return ErrWebhookLimit
			}
		}
		_, err := tx.NewInsert().Model(&row).Exec(ctx)
		return err
	})
	if errors.Is(err, ErrWebhookLimit) {
		return models.WebhookSubscription{}, models.Conflict("webhook_limit_reached",
			fmt.Sprintf("this workspace has %d webhook subscriptions, the most it may have; delete one first", max))
	}
	if err != nil {
		return models.WebhookSubscription{}, translate(err, nil)
	}
	return row.model(), nil
}

// Get returns one subscription of the workspace.
func (w Webhooks) Get(ctx context.Context, workspaceID, id uuid.UUID) (models.WebhookSubscription, error) {
	var row webhookRow
	err := w.db.NewSelect().Model(&row).Column(webhookColumnList...).
		Where("id = ? AND workspace_id = ?", id, workspaceID).Scan(ctx)
	if err != nil {
		return models.WebhookSubscription{}, webhookNotFound(translate(err, nil))
	}
	return row.model(), nil
}

// List returns one page of the workspace's subscriptions, newest first.
func (w Webhooks) List(ctx context.Context, workspaceID uuid.UUID, page models.PageRequest) (models.Page[models.WebhookSubscription], error) {
	var rows []webhookPageRow
	err := w.db.NewRaw(`SELECT `+webhookColumns+`, count(*) OVER () AS total
		FROM webhook_subscriptions WHERE workspace_id = ?
		ORDER BY date_created DESC, id DESC LIMIT ? OFFSET ?`,
		workspaceID, page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.WebhookSubscription]{}, translate(err, nil)
	}
	return finishPage(ctx, page, rows, webhookPageRow.subscription,
		w.db.NewSelect().TableExpr("webhook_subscriptions").Where("workspace_id = ?", workspaceID).Count)
}

type webhookPageRow struct {
	webhookRow
	windowCount
}

func (r webhookPageRow) subscription() models.WebhookSubscription { return r.model() }

// Update changes the members set in u and returns the result. Headers, and
// a url whose host may change, are written in a transaction on the locked
// row, so masked values keep what is stored and no sensitive value moves
// to another host unless sent again (keepSensitiveAtOrigin).
func (w Webhooks) Update(ctx context.Context, workspaceID, id uuid.UUID, u models.WebhookUpdate) (models.WebhookSubscription, error) {
	var row webhookRow
	var err error
	if u.Headers == nil && u.URL == nil {
		err = updateQuery(w.db, &row, workspaceID, id, u, nil).Scan(ctx)
	} else {
		err = w.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			headers, err := replaceHeaders(ctx, tx, workspaceID, id, u)
			if err != nil {
				return err
			}
			return updateQuery(tx, &row, workspaceID, id, u, headers).Scan(ctx)
		})
	}
	var invalid *models.Error
	if errors.As(err, &invalid) {
		return models.WebhookSubscription{}, err
	}
	if err != nil {
		return models.WebhookSubscription{}, webhookNotFound(translate(err, nil))
	}
	return row.model(), nil
}

// updateQuery sets the members set in u, and headers when not nil.
func updateQuery(db bun.IDB, row *webhookRow, workspaceID, id uuid.UUID, u models.WebhookUpdate, headers storedHeaders) *bun.UpdateQuery {
	q := db.NewUpdate().Model(row).
		Set("date_updated = ?", pgTime(time.Now())).
		Where("id = ? AND workspace_id = ?", id, workspaceID).
		Returning(webhookColumns)
	if u.URL != nil {
		q = q.Set("url = ?", *u.URL)
	}
	if u.Description != nil {
		q = q.Set("description = ?", *u.Description)
	}
	if u.EventTypes != nil {
		q = q.Set("event_types = ?", pgdialect.Array(eventTypeStrings(u.EventTypes)))
	}
	if u.Enabled != nil {
		q = q.Set("enabled = ?", *u.Enabled)
		if *u.Enabled {
			// Only a real re-enable resets the failure window: a client
			// resending enabled: true must not keep a dead endpoint alive.
			q = q.Set("disabled_reason = CASE WHEN enabled THEN disabled_reason END").
				Set("disabled_at = CASE WHEN enabled THEN disabled_at END").
				Set("failing_since = CASE WHEN enabled THEN failing_since END").
				Set("failing_first_event_id = CASE WHEN enabled THEN failing_first_event_id END")
		}
	}
	if u.RateLimitPerSecond.Set {
		q = q.Set("rate_limit_per_second = ?", u.RateLimitPerSecond.Value)
	}
	if headers != nil {
		q = q.Set("headers = ?", headers)
	}
	return q
}

// Delete removes a subscription of the workspace and its delivery records.
func (w Webhooks) Delete(ctx context.Context, workspaceID, id uuid.UUID) error {
	res, err := w.db.NewDelete().TableExpr("webhook_subscriptions").
		Where("id = ? AND workspace_id = ?", id, workspaceID).Exec(ctx)
	if err != nil {
		return translate(err, nil)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return models.NotFound("webhook subscription")
	}
	return nil
}

// Target returns what a delivery attempt needs, whatever the workspace.
func (w Webhooks) Target(ctx context.Context, id uuid.UUID) (models.WebhookTarget, error) {
	var row webhookRow
	err := w.db.NewSelect().Model(&row).Column("id", "workspace_id", "url", "enabled", "secret_ciphertext",
		"previous_secret_ciphertext", "previous_secret_expires_at", "rate_limit_per_second", "headers").
		Where("id = ?", id).Scan(ctx)
	if err != nil {
		return models.WebhookTarget{}, webhookNotFound(translate(err, nil))
	}
	return models.WebhookTarget{
		ID: row.ID, WorkspaceID: row.WorkspaceID, URL: row.URL,
		Enabled: row.Enabled, SecretCiphertext: row.SecretCiphertext,
		PreviousSecretCiphertext: row.PreviousSecretCiphertext, PreviousSecretExpiresAt: row.PreviousSecretExpiresAt,
		RateLimitPerSecond: row.RateLimitPerSecond, Headers: row.Headers.headers(),
	}, nil
}

// webhookNotFound names the resource in a bare not-found error.
func webhookNotFound(err error) error {
	if err == models.ErrNotFound {
		return models.NotFound("webhook subscription")
	}
	return err
}
