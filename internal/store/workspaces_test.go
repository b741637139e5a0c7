package store_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// A workspace's counts are its own rows': members, pending invites (not
// accepted, not expired) and projects; another workspace's count nothing.
func TestWorkspaceGetCounts(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	ctx := context.Background()
	now := time.Now()
	ws, err := st.Bootstrap(ctx, "Fraud Détection team!", "a-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.Bootstrap(ctx, "Fraud Détection team!", "b-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Workspaces().Get(ctx, ws.WorkspaceID, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.MemberCount != 1 || got.InviteCount != 0 || got.ProjectCount != 0 || got.CreatorID == nil || *got.CreatorID != ws.UserID ||
		got.Status != "active" || !slugPattern.MatchString(got.Slug) || got.Name != "Fraud Détection team!" {
		t.Fatalf("fresh workspace: %+v", got)
	}
	o, err := st.Workspaces().Get(ctx, other.WorkspaceID, now)
	if err != nil {
		t.Fatal(err)
	}
	if o.Slug == got.Slug {
		t.Errorf("two workspaces of one name share the slug %q", o.Slug)
	}

	if _, err := st.AddMember(ctx, ws.WorkspaceID, "m-"+uuid.NewString()[:8]+"@example.com", models.RoleMember); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p1", "p2"} {
		if _, err := st.Projects("https://app").Create(ctx, models.NewProject{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID, Name: name, TaskType: models.TaskLLMBase}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Projects("https://app").Create(ctx, models.NewProject{WorkspaceID: other.WorkspaceID, CreatorID: other.UserID, Name: "p", TaskType: models.TaskLLMBase}); err != nil {
		t.Fatal(err)
	}
	invite := func(email string, ttl time.Duration) {
		t.Helper()
		if _, err := st.Invites().Create(ctx, models.NewInvites{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
			Emails: []string{email}, Role: models.RoleMember, Now: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Hour).Add(ttl)}); err != nil {
			t.Fatal(err)
		}
	}
	invite("pending@example.com", 2*time.Hour)
	invite("expired@example.com", time.Minute)

	got, err = st.Workspaces().Get(ctx, ws.WorkspaceID, now)
	if err != nil {
		t.Fatal(err)
	}
	if got.MemberCount != 2 || got.InviteCount != 1 || got.ProjectCount != 2 {
		t.Errorf("counts: members %d invites %d projects %d, want 2, 1 (the expired one not counted), 2", got.MemberCount, got.InviteCount, got.ProjectCount)
	}
	if _, err := st.Workspaces().Get(ctx, uuid.New(), now); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("absent workspace: %v, want not found", err)
	}
}

func TestWorkspaceUpdate(t *testing.T) {
	st := store.New(pgtest.NewDB(t))
	ctx := context.Background()
	ws, err := st.Bootstrap(ctx, "One", "a-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.Bootstrap(ctx, "Two", "b-"+uuid.NewString()[:8]+"@example.com")
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	name, slug := "Renamed", "renamed-"+uuid.NewString()[:8]
	got, err := st.Workspaces().Update(ctx, ws.WorkspaceID, models.WorkspaceUpdate{Name: &name, Slug: &slug}, later)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != name || got.Slug != slug || !got.DateUpdated.Equal(later) {
		t.Errorf("updated: %+v", got)
	}
	if _, err := st.Workspaces().Update(ctx, other.WorkspaceID, models.WorkspaceUpdate{Slug: &slug}, later); err == nil || !errors.Is(err, models.ErrConflict) {
		t.Errorf("taking another workspace's slug: %v, want a conflict", err)
	}
	if _, err := st.Workspaces().Update(ctx, uuid.New(), models.WorkspaceUpdate{Name: &name}, later); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("absent workspace: %v, want not found", err)
	}
}
