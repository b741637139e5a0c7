package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/models"
)

type projectRow struct {
	bun.BaseModel                    `bun:"table:projects"`
	ID                               uuid.UUID       `bun:"id,pk"`
	WorkspaceID                      uuid.UUID       `bun:"workspace_id"`
	CreatorID                        *uuid.UUID      `bun:"creator_id"`
	Name                             string          `bun:"name"`
	Description                      string          `bun:"description"`
	Sample                           bool            `bun:"sample"`
	Source                           string          `bun:"source"`
	TaskType                         string          `bun:"task_type"`
	VersionCount                     int             `bun:"version_count"`
	InferencePipelineCount           int             `bun:"inference_pipeline_count"`
	GoalCount                        int             `bun:"goal_count"`
	DevelopmentGoalCount             int             `bun:"development_goal_count"`
	MonitoringGoalCount              int             `bun:"monitoring_goal_count"`
	UnreadNotificationCount          int             `bun:"unread_notification_count"`
	SlackChannelNotificationsEnabled bool            `bun:"slack_channel_notifications_enabled"`
	SlackChannelName                 string          `bun:"slack_channel_name"`
	SlackChannelID                   string          `bun:"slack_channel_id"`
	GitRepo                          *models.GitRepo `bun:"git_repo,type:jsonb"`
	DateCreated                      time.Time       `bun:"date_created"`
	DateUpdated                      time.Time       `bun:"date_updated"`
}

func (r projectRow) model(appBaseURL string) models.Project {
	return models.Project{
		ID:                               r.ID,
		WorkspaceID:                      r.WorkspaceID,
		CreatorID:                        r.CreatorID,
		Name:                             r.Name,
		DateCreated:                      r.DateCreated,
		DateUpdated:                      r.DateUpdated,
		Description:                      r.Description,
		Sample:                           r.Sample,
		Source:                           r.Source,
		TaskType:                         models.TaskType(r.TaskType),
		VersionCount:                     r.VersionCount,
		InferencePipelineCount:           r.InferencePipelineCount,
		GoalCount:                        r.GoalCount,
		DevelopmentGoalCount:             r.DevelopmentGoalCount,
		MonitoringGoalCount:              r.MonitoringGoalCount,
		UnreadNotificationCount:          r.UnreadNotificationCount,
		Links:                            models.ProjectLinks{App: appBaseURL + "/projects/" + r.ID.String()},
		SlackChannelNotificationsEnabled: r.SlackChannelNotificationsEnabled,
		SlackChannelName:                 r.SlackChannelName,
		SlackChannelID:                   r.SlackChannelID,
		GitRepo:                          r.GitRepo,
	}
}

// Projects reads and writes projects.
type Projects struct {
	db         bun.IDB
	appBaseURL string
}

// Projects returns the project queries, linking to the given web app.
func (s *Store) Projects(appBaseURL string) Projects {
	return Projects{db: s.db, appBaseURL: appBaseURL}
}

// List returns one page of a workspace's projects, newest first, with the
// exact total, read from project_counts unless a name filter forces a count.
func (p Projects) List(ctx context.Context, f models.ProjectFilter) (models.Page[models.Project], error) {
	model := func(r projectPageRow) models.Project { return r.model(p.appBaseURL) }
	if f.Name != "" {
		return p.listByName(ctx, f, model)
	}
	total := `(SELECT coalesce(sum(n), 0) FROM project_counts WHERE workspace_id = ?0`
	keep := `workspace_id = ?0`
	if f.TaskType != "" {
		total += ` AND task_type = ?1`
		keep += ` AND task_type = ?1`
	}
	total += `)`
	query := `SELECT p.*, ` + total + ` AS total FROM projects AS p WHERE p.` + keep
	if f.Page.Offset() > 0 {
		// = ANY(ARRAY(…)) skips earlier rows in the index alone, then probes
		// the page's ids, whatever the planner would guess for a semi-join.
		query = `SELECT p.*, ` + total + ` AS total FROM projects AS p WHERE p.id = ANY(ARRAY(
			SELECT id FROM projects WHERE ` + keep + `
			ORDER BY date_created DESC, id DESC LIMIT ?2 OFFSET ?3)) AND ?3 < ` + total
	}
	query += ` ORDER BY p.date_created DESC, p.id DESC LIMIT ?2`
	var rows []projectPageRow
	if err := p.db.NewRaw(query, f.WorkspaceID, string(f.TaskType), f.Page.PerPage, f.Page.Offset()).Scan(ctx, &rows); err != nil {
		return models.Page[models.Project]{}, translate(err, nil)
	}
	return finishPage(ctx, f.Page, rows, model, func(ctx context.Context) (int, error) {
		var n int
		err := p.db.NewRaw(`SELECT `+total, f.WorkspaceID, string(f.TaskType)).Scan(ctx, &n)
		return n, err
	})
}

// listByName lists the projects whose name holds f.Name.
func (p Projects) listByName(ctx context.Context, f models.ProjectFilter, model func(projectPageRow) models.Project) (models.Page[models.Project], error) {
	var rows []projectPageRow
	// bun keeps OFFSET as an int32 and would wrap a larger one onto an early
	// page; no workspace holds 2^31 projects, so such a page is empty.
	if f.Page.Offset() <= math.MaxInt32 {
		err := filterProjects(p.db.NewSelect(), f).ColumnExpr("p.*").
			OrderExpr("p.date_created DESC, p.id DESC").
			Limit(f.Page.PerPage).Offset(f.Page.Offset()).Scan(ctx, &rows)
		if err != nil {
			return models.Page[models.Project]{}, translate(err, nil)
		}
	}
	// A page with rows that is not full is the last: it tells the total.
	if n := len(rows); n > 0 && n < f.Page.PerPage || n == 0 && f.Page.Page == 1 {
		for i := range rows {
			rows[i].Total = f.Page.Offset() + n
		}
		return finishPage(ctx, f.Page, rows, model, nil)
	}
	n, err := filterProjects(p.db.NewSelect(), f).Count(ctx)
	if err != nil {
		return models.Page[models.Project]{}, translate(err, nil)
	}
	for i := range rows {
		rows[i].Total = n
	}
	return finishPage(ctx, f.Page, rows, model, func(context.Context) (int, error) { return n, nil })
}

type projectPageRow struct {
	projectRow
	windowCount
}

// filterProjects selects a workspace's projects matching the filter.
func filterProjects(q *bun.SelectQuery, f models.ProjectFilter) *bun.SelectQuery {
	q = q.TableExpr("projects AS p").Where("p.workspace_id = ?", f.WorkspaceID)
	if f.Name != "" {
		q = q.Where("p.name ILIKE ? ESCAPE '\\'", "%"+escapeLike(f.Name)+"%")
	}
	if f.TaskType != "" {
		q = q.Where("p.task_type = ?", string(f.TaskType))
	}
	return q
}

// errProjectLimit ends Create's transaction when the workspace is at its cap.
var errProjectLimit = errors.New("store: project limit reached")

// Create inserts a project made through the API, unless the workspace
// already holds in.Cap projects.
func (p Projects) Create(ctx context.Context, in models.NewProject) (models.Project, error) {
	now := pgTime(time.Now())
	creator := in.CreatorID
	row := projectRow{
		ID:          uuid.New(),
		WorkspaceID: in.WorkspaceID,
		CreatorID:   &creator,
		Name:        in.Name,
		Description: in.Description,
		Source:      models.SourceAPI,
		TaskType:    string(in.TaskType),
		DateCreated: now,
		DateUpdated: now,
	}
	err := p.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		full, err := atCap(ctx, tx, in.WorkspaceID, in.Cap,
			`SELECT coalesce(sum(n), 0) FROM project_counts WHERE workspace_id = ?`)
		if err != nil {
			return err
		}
		if full {
			return errProjectLimit
		}
		_, err = tx.NewInsert().Model(&row).Exec(ctx)
		return err
	})
	if errors.Is(err, errProjectLimit) {
		return models.Project{}, models.Conflict("project_limit_reached",
			fmt.Sprintf("this workspace has %d projects, the most it may have; delete one first", in.Cap))
	}
	if err != nil {
		return models.Project{}, translate(err,
			models.Conflict("project_name_taken", "a project named "+quote(in.Name)+" already exists in this workspace"))
	}
	return row.model(p.appBaseURL), nil
}

// Delete removes a project of the workspace.
func (p Projects) Delete(ctx context.Context, workspaceID, projectID uuid.UUID) error {
	res, err := p.db.NewDelete().TableExpr("projects").
		Where("id = ? AND workspace_id = ?", projectID, workspaceID).Exec(ctx)
	if err != nil {
		return translate(err, nil)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return models.NotFound("project")
	}
	return nil
}

// escapeLike makes user input match literally inside a LIKE pattern.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func quote(s string) string { return `"` + s + `"` }
