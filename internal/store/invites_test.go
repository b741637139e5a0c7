package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/internal/store"
	"github.com/openlayer-ai/workspace-service/models"
)

type inviteFixture struct {
	st        *store.Store
	ctx       context.Context
	ws, other store.Credentials
	now       time.Time
}

func newInviteFixture(t *testing.T) *inviteFixture {
	t.Helper()
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
	return &inviteFixture{st: st, ctx: ctx, ws: ws, other: other, now: time.Now().UTC().Truncate(time.Microsecond)}
}

func (f *inviteFixture) invite(t *testing.T, ws store.Credentials, role models.Role, ttl time.Duration, emails ...string) ([]models.Invite, error) {
	t.Helper()
	return f.st.Invites().Create(f.ctx, models.NewInvites{WorkspaceID: ws.WorkspaceID, CreatorID: ws.UserID,
		Emails: emails, Role: role, Now: f.now, ExpiresAt: f.now.Add(ttl)})
}

func code(err error) string {
	var me *models.Error
	if errors.As(err, &me) {
		return me.Code
	}
	return ""
}

// An accepted invite makes its address a member with the invite's role and
// a working first key; its token then admits no one again.
func TestInviteAccept(t *testing.T) {
	f := newInviteFixture(t)
	invs, err := f.invite(t, f.ws, models.RoleAdmin, time.Hour, "New.Person@Example.com", "second@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 2 || invs[0].Token == "" || invs[0].Token == invs[1].Token || invs[0].Status != models.InvitePending ||
		invs[0].Role != "ADMIN" || invs[0].Workspace.MemberCount != 1 || *invs[0].Creator.ID != f.ws.UserID {
		t.Fatalf("created: %+v", invs)
	}
	inv := invs[0]
	for _, bad := range []models.InviteAcceptance{
		{InviteID: inv.ID, Token: invs[1].Token, Now: f.now}, // another invite's token
		{InviteID: inv.ID, Token: inv.Token + "x", Now: f.now},
		{InviteID: uuid.New(), Token: inv.Token, Now: f.now},
	} {
		if _, err := f.st.Invites().Accept(f.ctx, bad); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("accept %+v: %v, want not found", bad, err)
		}
	}
	creds, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: inv.ID, Token: inv.Token, Now: f.now})
	if err != nil {
		t.Fatal(err)
	}
	if creds.WorkspaceID != f.ws.WorkspaceID || creds.Secret == "" {
		t.Fatalf("credentials: %+v", creds)
	}
	cred, err := f.st.CredentialByHash(f.ctx, secret.HashAPIKey(creds.Secret))
	if err != nil || cred.Role != models.RoleAdmin || cred.UserID != creds.UserID {
		t.Fatalf("the new key: %+v, %v; want an admin's", cred, err)
	}
	if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: inv.ID, Token: inv.Token, Now: f.now}); code(err) != "invite_accepted" {
		t.Errorf("second use of the token: %v, want invite_accepted", err)
	}
	page, err := f.st.Invites().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 1, PerPage: 10}, f.now)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[uuid.UUID]models.InviteStatus{}
	for _, i := range page.Items {
		statuses[i.ID] = i.Status
		if i.Token != "" {
			t.Errorf("a listed invite shows its token")
		}
	}
	if page.Meta.TotalItems != 2 || statuses[inv.ID] != models.InviteAccepted || statuses[invs[1].ID] != models.InvitePending ||
		page.Items[0].Workspace.MemberCount != 2 {
		t.Errorf("list: %+v", page)
	}
	// An accepted invite cannot be revoked; another workspace's is not found.
	if err := f.st.Invites().Revoke(f.ctx, f.ws.WorkspaceID, inv.ID); code(err) != "invite_accepted" {
		t.Errorf("revoke accepted: %v", err)
	}
	if err := f.st.Invites().Revoke(f.ctx, f.other.WorkspaceID, invs[1].ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("revoke from another workspace: %v, want not found", err)
	}
	// The address is a member now: inviting it again is a conflict.
	if _, err := f.invite(t, f.ws, models.RoleMember, time.Hour, "new.person@example.COM"); code(err) != "already_member" {
		t.Errorf("invite a member: %v, want already_member", err)
	}
}

// Expired and revoked invites admit no one; a new invite for an address
// replaces its open one.
func TestInviteExpiredAndRevoked(t *testing.T) {
	f := newInviteFixture(t)
	invs, err := f.invite(t, f.ws, models.RoleMember, time.Minute, "late@example.com", "revoked@example.com")
	if err != nil {
		t.Fatal(err)
	}
	later := f.now.Add(time.Minute)
	if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: invs[0].ID, Token: invs[0].Token, Now: later}); code(err) != "invite_expired" {
		t.Errorf("accept expired: %v, want invite_expired", err)
	}
	if err := f.st.Invites().Revoke(f.ctx, f.ws.WorkspaceID, invs[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: invs[1].ID, Token: invs[1].Token, Now: f.now}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("accept revoked: %v, want not found", err)
	}
	if err := f.st.Invites().Revoke(f.ctx, f.ws.WorkspaceID, invs[1].ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("revoke again: %v, want not found", err)
	}
	// Inviting an address again replaces its open invite, pending or
	// expired (any spelling): the old token is dead, the new one works.
	pending, err := f.invite(t, f.ws, models.RoleMember, time.Hour, "pending@example.com")
	if err != nil {
		t.Fatal(err)
	}
	f.now = later
	again, err := f.invite(t, f.ws, models.RoleAdmin, time.Hour, "LATE@example.com", "Pending@Example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []models.Invite{invs[0], pending[0]} {
		if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: old.ID, Token: old.Token, Now: later}); !errors.Is(err, models.ErrNotFound) {
			t.Errorf("the replaced invite of %s: %v, want not found", old.Email, err)
		}
	}
	for _, inv := range again {
		if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: inv.ID, Token: inv.Token, Now: later}); err != nil {
			t.Errorf("the new invite of %s: %v", inv.Email, err)
		}
	}
	page, err := f.st.Invites().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 1, PerPage: 10}, later)
	if err != nil || page.Meta.TotalItems != 2 {
		t.Errorf("listed after replacing: %+v, %v; want the two new invites only", page, err)
	}
	// The other workspace may invite the same address.
	if _, err := f.invite(t, f.other, models.RoleMember, time.Hour, "late@example.com"); err != nil {
		t.Errorf("the same address in another workspace: %v", err)
	}
}

// A user who joined by other means (the operator's add-member) between the
// invite and its acceptance: the acceptance is a conflict and changes nothing.
func TestInviteAcceptByAMember(t *testing.T) {
	f := newInviteFixture(t)
	invs, err := f.invite(t, f.ws, models.RoleAdmin, time.Hour, "x@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AddMember(f.ctx, f.ws.WorkspaceID, "X@example.com", models.RoleMember); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.Invites().Accept(f.ctx, models.InviteAcceptance{InviteID: invs[0].ID, Token: invs[0].Token, Now: f.now}); code(err) != "already_member" {
		t.Errorf("accept by a member: %v, want already_member", err)
	}
	page, err := f.st.Invites().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 1, PerPage: 10}, f.now)
	if err != nil || len(page.Items) != 1 || page.Items[0].Status != models.InvitePending {
		t.Errorf("the invite after a refused acceptance: %+v, %v; want still pending", page, err)
	}
}

// Revoke racing with another request that settles the invite first: the
// answer is what happened to it, read after the wait. Two revokes of one
// invite once answered the loser 409 invite_accepted (seen with ten
// parallel DELETEs against make dev): the loser's reading of the invite
// came from before its wait, when it was still pending.
func TestInviteRevokeRacing(t *testing.T) {
	for _, tc := range []struct {
		name, first string
		want        func(error) bool
	}{
		{"revoked first", `DELETE FROM workspace_invites WHERE id = ?`,
			func(err error) bool { return errors.Is(err, models.ErrNotFound) }},
		{"accepted first", `UPDATE workspace_invites SET date_accepted = now() WHERE id = ?`,
			func(err error) bool { return code(err) == "invite_accepted" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInviteFixture(t)
			invs, err := f.invite(t, f.ws, models.RoleMember, time.Hour, "racing@example.com")
			if err != nil {
				t.Fatal(err)
			}
			db := f.st.DB()
			tx, err := db.BeginTx(f.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if _, err := tx.ExecContext(f.ctx, tc.first, invs[0].ID); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- f.st.Invites().Revoke(f.ctx, f.ws.WorkspaceID, invs[0].ID) }()
			waitForLockWait(t, f)
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; !tc.want(err) {
				t.Errorf("revoke after the invite was %s: %v", tc.name, err)
			}
		})
	}
}

// waitForLockWait returns once a statement of the test's database waits
// on a lock over workspace_invites.
func waitForLockWait(t *testing.T, f *inviteFixture) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var waiting int
		if err := f.st.DB().NewRaw(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%workspace_invites%' AND pid <> pg_backend_pid()`).
			Scan(f.ctx, &waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no statement waited on a lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Inviting an address again while its invite is being accepted: once the
// acceptance commits, the address is a member, and the new invite is
// 409 already_member. The member check once ran before the replacement's
// delete waited on the accepting transaction, so it missed the new member
// and a member was left with a pending invite.
func TestInviteAgainWhileAccepted(t *testing.T) {
	f := newInviteFixture(t)
	invs, err := f.invite(t, f.ws, models.RoleMember, time.Hour, "joining@example.com")
	if err != nil {
		t.Fatal(err)
	}
	// The acceptance, as Accept does it, held open.
	tx, err := f.st.DB().BeginTx(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	user := uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`SELECT 1 FROM workspace_invites WHERE id = ? FOR UPDATE`, []any{invs[0].ID}},
		{`INSERT INTO users (id, email) VALUES (?, 'joining@example.com')`, []any{user}},
		{`INSERT INTO workspace_members (workspace_id, user_id, role) VALUES (?, ?, 'member')`, []any{f.ws.WorkspaceID, user}},
		{`UPDATE workspace_invites SET date_accepted = now() WHERE id = ?`, []any{invs[0].ID}},
	} {
		if _, err := tx.NewRaw(q.sql, q.args...).Exec(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.invite(t, f.ws, models.RoleAdmin, time.Hour, "Joining@example.com")
		done <- err
	}()
	waitForLockWait(t, f)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; code(err) != "already_member" {
		t.Errorf("invite while the address's invite was accepted: %v, want already_member", err)
	}
	page, err := f.st.Invites().List(f.ctx, f.ws.WorkspaceID, models.PageRequest{Page: 1, PerPage: 10}, f.now)
	if err != nil || len(page.Items) != 1 {
		t.Errorf("invites: %+v, %v; want the accepted one only", page.Items, err)
	}
}
