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
}

// portalSessionColumns never include the hashes: nothing reads them back.
const portalSessionColumns = `id, workspace_id, created_by, read_only, date_created, expires_at, opened_at, last_seen_at`

func (r portalSessionRow) model() models.PortalSession {
	return models.PortalSession{
		ID: r.ID, WorkspaceID: r.WorkspaceID, CreatedBy: r.CreatedBy, ReadOnly: r.ReadOnly,
		DateCreated: r.DateCreated, ExpiresAt: r.ExpiresAt, OpenedAt: r.OpenedAt, LastSeenAt: r.LastSeenAt,
	}
}

// PortalSessions reads and writes consumer portal sessions, scoped by workspace.
type PortalSessions struct{ db bun.IDB }

// PortalSessions returns the portal session queries.
func (s *Store) PortalSessions() PortalSessions { return PortalSessions{db: s.db} }

// portalSessionNotFound is what every refused link or cookie reads as:
// unknown, spent, expired or ended look alike.
var portalSessionNotFound = models.NotFound("portal session")

// Create stores a session minted at now, first deleting the workspace's
// sessions that have expired, so the table holds only live ones.
func (p PortalSessions) Create(ctx context.Context, in models.NewPortalSession, now time.Time) (models.PortalSession, error) {
	var row portalSessionRow
	err := p.db.NewRaw(`WITH pruned AS (
			DELETE FROM portal_sessions WHERE workspace_id = ?1 AND expires_at <= ?6
		)
		INSERT INTO portal_sessions (id, workspace_id, created_by, token_hash, read_only, date_created, expires_at)
		VALUES (?0, ?1, ?2, ?3, ?4, ?6, ?5)
		RETURNING `+portalSessionColumns,
		in.ID, in.WorkspaceID, in.CreatedBy, in.TokenHash, in.ReadOnly, pgTime(in.ExpiresAt), pgTime(now)).Scan(ctx, &row)
	if err != nil {
		return models.PortalSession{}, translate(err, nil)
	}
	return row.model(), nil
}

// List returns one page of the workspace's sessions not yet expired at
// now, newest first.
func (p PortalSessions) List(ctx context.Context, workspaceID uuid.UUID, now time.Time, page models.PageRequest) (models.Page[models.PortalSession], error) {
	var rows []portalSessionRow
	err := p.db.NewRaw(`SELECT `+portalSessionColumns+` FROM portal_sessions
		WHERE workspace_id = ?0 AND expires_at > ?1
		ORDER BY date_created DESC, id DESC LIMIT ?2 OFFSET ?3`,
		workspaceID, pgTime(now), page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.PortalSession]{}, translate(err, nil)
	}
	var total int
	err = p.db.NewRaw(`SELECT count(*) FROM portal_sessions WHERE workspace_id = ?0 AND expires_at > ?1`,
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

// Open spends a link's token: the one update that finds it unopened and
// unexpired binds the cookie's hash to the session, so a second use of the
// link, even a concurrent one, finds nothing.
func (p PortalSessions) Open(ctx context.Context, tokenHash, cookieHash []byte, now time.Time) (models.PortalSession, error) {
	var rows []portalSessionRow
	err := p.db.NewRaw(`UPDATE portal_sessions SET cookie_hash = ?0, opened_at = ?1, last_seen_at = ?1
		WHERE token_hash = ?2 AND opened_at IS NULL AND expires_at > ?1
		RETURNING `+portalSessionColumns, cookieHash, pgTime(now), tokenHash).Scan(ctx, &rows)
	if err != nil {
		return models.PortalSession{}, translate(err, nil)
	}
	if len(rows) == 0 {
		return models.PortalSession{}, portalSessionNotFound
	}
	return rows[0].model(), nil
}

// ByCookie returns the live session a cookie's hash belongs to, recording
// it as seen at most once a minute.
func (p PortalSessions) ByCookie(ctx context.Context, cookieHash []byte, now time.Time) (models.PortalSession, error) {
	var rows []portalSessionRow
	err := p.db.NewRaw(`SELECT `+portalSessionColumns+` FROM portal_sessions
		WHERE cookie_hash = ?0 AND expires_at > ?1`, cookieHash, pgTime(now)).Scan(ctx, &rows)
	if err != nil {
		return models.PortalSession{}, translate(err, nil)
	}
	if len(rows) == 0 {
		return models.PortalSession{}, portalSessionNotFound
	}
	s := rows[0].model()
	if s.LastSeenAt == nil || s.LastSeenAt.Before(now.Add(-time.Minute)) {
		if _, err := p.db.NewRaw(`UPDATE portal_sessions SET last_seen_at = ? WHERE id = ?`, pgTime(now), s.ID).Exec(ctx); err != nil {
			return models.PortalSession{}, translate(err, nil)
		}
		t := pgTime(now)
		s.LastSeenAt = &t
	}
	return s, nil
}
