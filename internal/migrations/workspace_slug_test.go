package migrations_test

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

// Workspaces made before migration …200 get a slug from their name and id,
// dateUpdated = dateCreated and their first admin as creator; the down
// migration undoes it all; an insert that names no slug gets one.
func TestWorkspaceSlugBackfill(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, pgtest.NewEmptyURL(t))
	if _, err := migrations.Apply(ctx, db); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	ws, err := st.Bootstrap(ctx, "  Ünïcode & Co — Team 42  ", "first@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMember(ctx, ws.WorkspaceID, "later@acme.test", models.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	blank, err := st.Bootstrap(ctx, "!!!", "blank@acme.test")
	if err != nil {
		t.Fatal(err)
	}

	// Back to before the migration, and forward again, as a deploy does.
	down, err := os.ReadFile("sql/20261126000200_workspace_invites.tx.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, string(down)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM bun_migrations WHERE name = '20261126000200'`)
		return err
	}); err != nil {
		t.Fatalf("down: %v", err)
	}
	// Made back then, a day ago.
	if _, err := db.ExecContext(ctx, `UPDATE workspaces SET date_created = now() - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	if res, err := migrations.Apply(ctx, db); err != nil || len(res.Applied) != 1 {
		t.Fatalf("applied %v, %v; want the workspace migration", res.Applied, err)
	}

	type row struct {
		Slug        string    `bun:"slug"`
		CreatorID   uuid.UUID `bun:"creator_id"`
		DateCreated time.Time `bun:"date_created"`
		DateUpdated time.Time `bun:"date_updated"`
	}
	read := func(id uuid.UUID) row {
		var r row
		if err := db.NewSelect().Table("workspaces").Column("slug", "creator_id", "date_created", "date_updated").
			Where("id = ?", id).Scan(ctx, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	hex12 := regexp.QuoteMeta(uuidHex(ws.WorkspaceID)[:12])
	if r := read(ws.WorkspaceID); !regexp.MustCompile(`^n-code-co-team-42-`+hex12+`$`).MatchString(r.Slug) ||
		r.CreatorID != ws.UserID || !r.DateUpdated.Equal(r.DateCreated) {
		t.Errorf("backfilled: %+v, want slug n-code-co-team-42-<12 hex of the id>, the first admin %s, dateUpdated = dateCreated", r, ws.UserID)
	}
	if r := read(blank.WorkspaceID); r.Slug != "workspace-"+uuidHex(blank.WorkspaceID)[:12] {
		t.Errorf("a name without ASCII letters or digits: slug %q", r.Slug)
	}

	// An insert naming no slug, as the previous release makes.
	id := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO workspaces (id, name) VALUES (?, 'Old release')`, id); err != nil {
		t.Fatal(err)
	}
	if r := read(id); r.Slug != "old-release-"+uuidHex(id)[:12] {
		t.Errorf("slug of an insert without one: %q", r.Slug)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM workspaces WHERE creator_id IS NULL`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d workspaces without a creator, want only the one inserted without", n)
	}
}

func uuidHex(id uuid.UUID) string {
	s := id.String()
	return s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
}
