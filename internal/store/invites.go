package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

// Invites creates, lists, revokes and accepts workspace invites.
type Invites struct{ db bun.IDB }

// Invites is the invite store.
func (s *Store) Invites() Invites { return Invites{db: s.db} }

type inviteRow struct {
	bun.BaseModel `bun:"table:workspace_invites"`
	ID            uuid.UUID  `bun:"id,pk"`
	WorkspaceID   uuid.UUID  `bun:"workspace_id"`
	CreatorID     *uuid.UUID `bun:"creator_id"`
	Email         string     `bun:"email"`
	Role          string     `bun:"role"`
	TokenHash     []byte     `bun:"token_hash"`
	DateCreated   time.Time  `bun:"date_created"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	DateAccepted  *time.Time `bun:"date_accepted"`
}

func (r inviteRow) model(ws models.InviteWorkspace, now time.Time) models.Invite {
	return models.Invite{
		ID: r.ID, Creator: models.InviteCreator{ID: r.CreatorID}, DateCreated: r.DateCreated,
		Email: r.Email, Role: models.Role(r.Role).SDKRole(),
		Status:    models.InviteStatusAt(r.DateAccepted, r.ExpiresAt, now),
		Workspace: ws, ExpiresAt: r.ExpiresAt, DateAccepted: r.DateAccepted,
	}
}

// inviteColumns is what is read of an invite: never its token's hash.
const inviteColumns = "id, workspace_id, creator_id, email, role, date_created, expires_at, date_accepted"

// A wrong token reads as an invite that does not exist, so presenting
// guesses tells nothing of which invites exist or where they stand.
var errInviteNotFound = models.NotFound("invite")

var (
	errInviteAccepted = models.Conflict("invite_accepted", "this invite has already been accepted")
	errInviteExpired  = models.Conflict("invite_expired", "this invite has expired; ask a workspace admin for a new one")
	errInvitePending  = models.Conflict("invite_pending", "another request invited this address at the same moment; retry to replace its invite")
	errAlreadyMember  = models.Conflict("already_member", "the user is already a member of the workspace")
)

// Create invites each address of in, all or none: an address that is
// already a member is a conflict naming it. An address's open invite is
// replaced, its token dead. Each invite returned carries its token, which
// is not stored.
func (v Invites) Create(ctx context.Context, in models.NewInvites) ([]models.Invite, error) {
	var out []models.Invite
	err := v.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		emails := pgdialect.Array(in.Emails)
		// A new invite for an address replaces its open one, pending or
		// expired: inviting again is how an admin resends a lost token.
		// The delete comes first: it waits for an acceptance of one of
		// these invites in progress, and the member check below, a
		// statement of its own, then sees the member that acceptance made.
		if _, err := tx.NewRaw(`DELETE FROM workspace_invites
			WHERE workspace_id = ? AND date_accepted IS NULL
			  AND lower(email) IN (SELECT lower(e) FROM unnest(?::text[]) e)`,
			in.WorkspaceID, emails).Exec(ctx); err != nil {
			return translate(err, nil)
		}
		var clash []string
		err := tx.NewRaw(`SELECT u.email FROM users u
			JOIN workspace_members m ON m.user_id = u.id AND m.workspace_id = ?
			WHERE lower(u.email) IN (SELECT lower(e) FROM unnest(?::text[]) e) ORDER BY 1`,
			in.WorkspaceID, emails).Scan(ctx, &clash)
		if err != nil {
			return translate(err, nil)
		}
		if len(clash) > 0 {
			return conflictOn(errAlreadyMember, clash, "is already a member of the workspace")
		}
		ws, err := inviteWorkspace(ctx, tx, in.WorkspaceID)
		if err != nil {
			return err
		}
		rows := make([]inviteRow, len(in.Emails))
		tokens := make([]string, len(in.Emails))
		for i, email := range in.Emails {
			tok, err := secret.NewInviteToken()
			if err != nil {
				return err
			}
			creator := in.CreatorID
			rows[i] = inviteRow{
				ID: uuid.New(), WorkspaceID: in.WorkspaceID, CreatorID: &creator, Email: email,
				Role: string(in.Role), TokenHash: tok.Hash,
				DateCreated: pgTime(in.Now), ExpiresAt: pgTime(in.ExpiresAt),
			}
			tokens[i] = tok.Secret
		}
		// Of two requests inviting one address at once, the second loses here.
		if _, err := tx.NewInsert().Model(&rows).Exec(ctx); err != nil {
			return translate(err, errInvitePending)
		}
		out = make([]models.Invite, len(rows))
		for i, r := range rows {
			out[i] = r.model(ws, in.Now)
			out[i].Token = tokens[i]
		}
		return nil
	})
	return out, err
}

// conflictOn is err with one detail per address.
func conflictOn(err *models.Error, emails []string, what string) error {
	e := *err
	for _, m := range emails {
		e.Details = append(e.Details, models.FieldError{Field: "emails", Message: m + " " + what})
	}
	return &e
}

// inviteWorkspace is the workspace as invites embed it.
func inviteWorkspace(ctx context.Context, db bun.IDB, id uuid.UUID) (models.InviteWorkspace, error) {
	var ws models.InviteWorkspace
	err := db.NewRaw(`SELECT w.id, w.date_created, w.name, w.slug,
			(SELECT count(*) FROM workspace_members m WHERE m.workspace_id = w.id)
		FROM workspaces w WHERE w.id = ?`, id).Scan(ctx, &ws.ID, &ws.DateCreated, &ws.Name, &ws.Slug, &ws.MemberCount)
	return ws, translate(err, nil)
}

type invitePageRow struct {
	inviteRow
	windowCount
}

// List pages through a workspace's invites, newest first, each with its
// status at now.
func (v Invites) List(ctx context.Context, workspaceID uuid.UUID, page models.PageRequest, now time.Time) (models.Page[models.Invite], error) {
	ws, err := inviteWorkspace(ctx, v.db, workspaceID)
	if err != nil {
		return models.Page[models.Invite]{}, err
	}
	var rows []invitePageRow
	err = v.db.NewRaw(`SELECT `+inviteColumns+`, count(*) OVER () AS total
		FROM workspace_invites WHERE workspace_id = ?
		ORDER BY date_created DESC, id DESC LIMIT ? OFFSET ?`,
		workspaceID, page.PerPage, page.Offset()).Scan(ctx, &rows)
	if err != nil {
		return models.Page[models.Invite]{}, translate(err, nil)
	}
	return finishPage(ctx, page, rows, func(r invitePageRow) models.Invite { return r.model(ws, now) },
		v.db.NewSelect().TableExpr("workspace_invites").Where("workspace_id = ?", workspaceID).Count)
}

// Revoke deletes an invite not yet accepted, so its token admits no one;
// an accepted one is a conflict (its member stays). What became of an
// invite the delete left is read by a statement of its own, after the
// delete's wait on a concurrent revoke or acceptance: read in the
// delete's statement, it would be the invite from before that wait.
func (v Invites) Revoke(ctx context.Context, workspaceID, id uuid.UUID) error {
	res, err := v.db.NewDelete().TableExpr("workspace_invites").
		Where("id = ? AND workspace_id = ? AND date_accepted IS NULL", id, workspaceID).Exec(ctx)
	if err != nil {
		return translate(err, nil)
	}
	if n, err := res.RowsAffected(); err != nil {
		return translate(err, nil)
	} else if n > 0 {
		return nil
	}
	var accepted bool
	err = v.db.NewRaw(`SELECT date_accepted IS NOT NULL FROM workspace_invites WHERE id = ? AND workspace_id = ?`,
		id, workspaceID).Scan(ctx, &accepted)
	switch err = translate(err, nil); {
	case errors.Is(err, models.ErrNotFound):
		return errInviteNotFound
	case err != nil:
		return err
	case accepted:
		return models.Conflict("invite_accepted", "an accepted invite cannot be revoked")
	}
	// Pending, yet not deleted: only a delete that raced with this read
	// leaves that, and the invite is gone either way.
	return errInviteNotFound
}

// Accept admits the holder of an invite's token: the invite's address
// joins the workspace with the invite's role and gets its first API key
// (addMember, as the operator's add-member), and the invite is accepted.
// The key counts against a.KeyCap as a created one does; a workspace at
// its cap leaves the invite pending.
func (v Invites) Accept(ctx context.Context, a models.InviteAcceptance) (Credentials, error) {
	var creds Credentials
	err := v.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var r inviteRow
		err := tx.NewSelect().Model(&r).Where("id = ?", a.InviteID).For("UPDATE").Scan(ctx)
		switch err = translate(err, nil); {
		case errors.Is(err, models.ErrNotFound):
			return errInviteNotFound
		case err != nil:
			return err
		case !secret.InviteTokenMatches(a.Token, r.TokenHash):
			return errInviteNotFound
		}
		switch models.InviteStatusAt(r.DateAccepted, r.ExpiresAt, a.Now) {
		case models.InviteAccepted:
			return errInviteAccepted
		case models.InviteExpired:
			return errInviteExpired
		}
		full, err := atCap(ctx, tx, r.WorkspaceID, a.KeyCap,
			`SELECT count(*) FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL`)
		if err != nil {
			return translate(err, nil)
		}
		if full {
			return errAPIKeyLimit
		}
		if creds, err = addMember(ctx, tx, r.WorkspaceID, r.Email, models.Role(r.Role)); err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model(&r).Set("date_accepted = ?", pgTime(a.Now)).WherePK().Exec(ctx)
		return translate(err, nil)
	})
	if errors.Is(err, errAPIKeyLimit) {
		return Credentials{}, models.Conflict("api_key_limit_reached",
			fmt.Sprintf("this workspace has %d API keys, the most it may have; an admin must revoke one before this invite can be accepted", a.KeyCap))
	}
	return creds, err
}
