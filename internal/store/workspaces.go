package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

// Workspaces reads and changes workspaces.
type Workspaces struct{ db bun.IDB }

// Workspaces is the workspace store.
func (s *Store) Workspaces() Workspaces { return Workspaces{db: s.db} }

var errSlugTaken = models.Conflict("slug_taken", "another workspace has this slug")

// workspaceView is a workspace with the counts the API shows.
type workspaceView struct {
	workspaceRow
	MemberCount  int `bun:"member_count,scanonly"`
	InviteCount  int `bun:"invite_count,scanonly"`
	ProjectCount int `bun:"project_count,scanonly"`
}

// Get reads a workspace with its counts: members, invites pending at now,
// and projects (from project_counts, which triggers keep exact).
func (w Workspaces) Get(ctx context.Context, id uuid.UUID, now time.Time) (models.Workspace, error) {
	var v workspaceView
	err := w.db.NewRaw(`SELECT w.id, w.name, w.slug, w.creator_id, w.date_created, w.date_updated,
			(SELECT count(*) FROM workspace_members m WHERE m.workspace_id = w.id) AS member_count,
			(SELECT count(*) FROM workspace_invites i
			 WHERE i.workspace_id = w.id AND i.date_accepted IS NULL AND i.expires_at > ?) AS invite_count,
			(SELECT coalesce(sum(c.n), 0) FROM project_counts c WHERE c.workspace_id = w.id) AS project_count
		FROM workspaces w WHERE w.id = ?`, now, id).Scan(ctx, &v)
	if err != nil {
		return models.Workspace{}, translate(err, nil)
	}
	return models.Workspace{
		ID: v.ID, CreatorID: v.CreatorID, DateCreated: v.DateCreated, DateUpdated: v.DateUpdated,
		InviteCount: v.InviteCount, MemberCount: v.MemberCount, ProjectCount: v.ProjectCount,
		Name: v.Name, Slug: v.Slug, Status: models.WorkspaceActive,
	}, nil
}

// Update changes the members set in u at now, and returns the workspace.
// A slug another workspace has is a conflict.
func (w Workspaces) Update(ctx context.Context, id uuid.UUID, u models.WorkspaceUpdate, now time.Time) (models.Workspace, error) {
	q := w.db.NewUpdate().Table("workspaces").Set("date_updated = ?", pgTime(now)).Where("id = ?", id)
	if u.Name != nil {
		q = q.Set("name = ?", *u.Name)
	}
	if u.Slug != nil {
		q = q.Set("slug = ?", *u.Slug)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return models.Workspace{}, translate(err, errSlugTaken)
	}
	if n, err := res.RowsAffected(); err != nil {
		return models.Workspace{}, translate(err, nil)
	} else if n == 0 {
		return models.Workspace{}, models.NotFound("workspace")
	}
	return w.Get(ctx, id, now)
}
