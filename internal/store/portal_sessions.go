package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

type portalSessionRow struct {
	bun.BaseModel `bun:"table:portal_sessions"`
	ID            uuid.UUID  `bun:"id,pk"`
	WorkspaceID   uuid.UUID  `bun:"workspace_id"`
	CreatedBy     *uuid.UUID `bun:"created_by"`
	ReadOnly      bool       `bun:"read_only"`
	DateCreated   time.Time  `bun:"date_created"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	OpenedAt      *time.Time `bun:"opened_at"`
	LastSeenAt    *time.Time `bun:"last_seen_at"`
	APIKeyID      uuid.UUID  `bun:"api_key_id"`
	WorkspaceName string     `bun:"workspace_name"`
	AppName       *string    `bun:"application_name"`
	LogoURL       *string    `bun:"logo_url"`
}

// portalSessionColumns never include the hashes: nothing reads them back.
// They are those of s, a session joined as liveSession joins it.
const portalSessionColumns = `s.id, s.workspace_id, s.created_by, s.read_only, s.date_created, s.expires_at,
	s.opened_at, s.last_seen_at, s.api_key_id, w.name AS workspace_name, s.application_name, s.logo_url`

// liveSession joins a session s to what keeps it alive besides its expiry:
// its minting key, neither revoked nor expired at now (a placeholder such
// as "?1"), whose owner is an
// admin of the workspace (so removing them, demoting them or revoking the
// key ends the session at its next request), and its workspace's name.
// Every join is by primary key, cheap enough for every request.
func liveSession(now string) string {
	return `portal_sessions s
	JOIN api_keys k ON k.id = s.api_key_id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ` + now + `)
		AND (k.secret_hash = s.api_key_secret_hash
			OR k.previous_secret_hash = s.api_key_secret_hash AND k.previous_key_expires_at > ` + now + `)
	JOIN workspace_members m ON m.workspace_id = s.workspace_id AND m.user_id = k.user_id AND m.role = 'admin'
	JOIN workspaces w ON w.id = s.workspace_id`
}

func (r portalSessionRow) model() models.PortalSession {
	return models.PortalSession{
		ID: r.ID, WorkspaceID: r.WorkspaceID, CreatedBy: r.CreatedBy, ReadOnly: r.ReadOnly,
		DateCreated: r.DateCreated, ExpiresAt: r.ExpiresAt, OpenedAt: r.OpenedAt, LastSeenAt: r.LastSeenAt,
		APIKeyID: r.APIKeyID, WorkspaceName: r.WorkspaceName, ApplicationName: r.AppName, LogoURL: r.LogoURL,
	}
}

// PortalSessions reads and writes consumer portal sessions, scoped by workspace.
type PortalSessions struct{ db bun.IDB }

// PortalSessions returns the portal session queries.
func (s *Store) PortalSessions() PortalSessions { return PortalSessions{db: s.db} }

// portalSessionNotFound is what every refused link or cookie reads as:
// unknown, spent, expired or ended look alike.
var portalSessionNotFound = models.NotFound("portal session")

// Create stores a session minted at now. Holding the workspace's row lock
// (as caps do), it first deletes the workspace's sessions that have expired
// or whose key or admin is gone, then,
// when max (0: no cap) sessions are already live, ends the oldest so that
// with the new one there are max; it reports how many it ended.
func (p PortalSessions) Create(ctx context.Context, in models.NewPortalSession, now time.Time, max int) (models.PortalSession, int, error) {
	var row portalSessionRow
	ended := 0
	err := p.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw(`SELECT 1 FROM workspaces WHERE id = ? FOR NO KEY UPDATE`, in.WorkspaceID).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewRaw(`DELETE FROM portal_sessions p WHERE p.workspace_id = ?0
				AND (p.expires_at <= ?1 OR p.id NOT IN (SELECT s.id FROM `+liveSession("?1")+` WHERE s.workspace_id = ?0))`,
			in.WorkspaceID, pgTime(now)).Exec(ctx); err != nil {
			return err
		}
		if max > 0 {
			res, err := tx.NewRaw(`DELETE FROM portal_sessions WHERE id IN (
					SELECT id FROM portal_sessions WHERE workspace_id = ?
					ORDER BY date_created DESC, id DESC OFFSET ?)`, in.WorkspaceID, max-1).Exec(ctx)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			ended = int(n)
		}
		return tx.NewRaw(`WITH s AS (
				INSERT INTO portal_sessions (id, workspace_id, created_by, api_key_id, token_hash, read_only,
					date_created, expires_at, application_name, logo_url, api_key_secret_hash)
				VALUES (?0, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
				RETURNING *
			)
			SELECT `+portalSessionColumns+` FROM s JOIN workspaces w ON w.id = s.workspace_id`,
			in.ID, in.WorkspaceID, in.CreatedBy, in.APIKeyID, in.TokenHash, in.ReadOnly,
			pgTime(now), pgTime(in.ExpiresAt), in.ApplicationName, in.LogoURL, in.APIKeySecretHash).Scan(ctx, &row)
	})
	if err != nil {
		return models.PortalSession{}, 0, translate(err, nil)
	}
	return row.model(), ended, nil
}

// List returns one page of the workspace's sessions not yet expired at
// now, newest first.
func (p PortalSessions) List(ctx context.Context, workspaceID uuid.UUID, now time.Time, page models.PageRequest) (models.Page[models.PortalSession], error) {
	var rows []portalSessionRow
	err := p.db.NewRaw(`SELECT `+portalSessionColumns+` FROM `+liveSession("?1")+`
		WHERE s.workspace_id = ?0 AND s.expires_at > ?1
		ORDER BY s.date_created DESC, s.id DESC LIMIT ?2 OFFSET ?3`,
		workspaceID, pgTime(now), page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.PortalSession]{}, translate(err, nil)
	}
	var total int
	err = p.db.NewRaw(`SELECT count(*) FROM `+liveSession("?1")+` WHERE s.workspace_id = ?0 AND s.expires_at > ?1`,
		workspaceID, pgTime(now)).Scan(ctx, &total)
	if err != nil {
		return models.Page[models.PortalSession]{}, translate(err, nil)
	}
	items := make([]models.PortalSession, len(rows))
	for i, r := range rows {
		items[i] = r.model()
	}
	return models.NewPage(page, total, items), nil
}

// Delete ends a session of the workspace at once: its link and cookie stop working.
func (p PortalSessions) Delete(ctx context.Context, workspaceID, id uuid.UUID) error {
	res, err := p.db.NewRaw(`DELETE FROM portal_sessions WHERE id = ? AND workspace_id = ?`, id, workspaceID).Exec(ctx)
	if err != nil {
		return translate(err, nil)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return portalSessionNotFound
	}
	return nil
}

// Peek returns the live, unopened session a link's token belongs to without
// spending it: the page a link opens on shows whose portal it is and asks
// for a click, so a preview bot's GET spends nothing.
func (p PortalSessions) Peek(ctx context.Context, tokenHash []byte, now time.Time) (models.PortalSession, error) {
	return p.one(ctx, `SELECT `+portalSessionColumns+` FROM `+liveSession("?1")+`
		WHERE s.token_hash = ?0 AND s.opened_at IS NULL AND s.expires_at > ?1`, tokenHash, pgTime(now))
}

// Open spends a link's token: the one update that finds it unopened,
// unexpired and still on a live key binds the cookie's hash to the
// session, so a second use of the link, even a concurrent one, finds nothing.
func (p PortalSessions) Open(ctx context.Context, tokenHash, cookieHash []byte, now time.Time) (models.PortalSession, error) {
	return p.one(ctx, `WITH s AS (
			UPDATE portal_sessions SET cookie_hash = ?0, opened_at = ?1, last_seen_at = ?1
			WHERE id = (SELECT s.id FROM `+liveSession("?1")+`
				WHERE s.token_hash = ?2 AND s.opened_at IS NULL AND s.expires_at > ?1)
			AND opened_at IS NULL
			RETURNING *
		)
		SELECT `+portalSessionColumns+` FROM s JOIN workspaces w ON w.id = s.workspace_id`,
		cookieHash, pgTime(now), tokenHash)
}

// ByCookie returns the live session a cookie's hash belongs to, recording
// it as seen at most once a minute.
func (p PortalSessions) ByCookie(ctx context.Context, cookieHash []byte, now time.Time) (models.PortalSession, error) {
	s, err := p.one(ctx, `SELECT `+portalSessionColumns+` FROM `+liveSession("?1")+`
		WHERE s.cookie_hash = ?0 AND s.expires_at > ?1`, cookieHash, pgTime(now))
	if err != nil {
		return models.PortalSession{}, err
	}
	if s.LastSeenAt == nil || s.LastSeenAt.Before(now.Add(-time.Minute)) {
		if _, err := p.db.NewRaw(`UPDATE portal_sessions SET last_seen_at = ? WHERE id = ?`, pgTime(now), s.ID).Exec(ctx); err != nil {
			return models.PortalSession{}, translate(err, nil)
		}
		t := pgTime(now)
		s.LastSeenAt = &t
	}
	return s, nil
}

// one scans the session a query finds, or portalSessionNotFound.
func (p PortalSessions) one(ctx context.Context, query string, args ...any) (models.PortalSession, error) {
	var rows []portalSessionRow
	if err := p.db.NewRaw(query, args...).Scan(ctx, &rows); err != nil {
		return models.PortalSession{}, translate(err, nil)
	}
	if len(rows) == 0 {
		return models.PortalSession{}, portalSessionNotFound
	}
	return rows[0].model(), nil
}
