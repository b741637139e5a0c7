package store

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/openlayer-ai/workspace-service/internal/secret"
	"github.com/openlayer-ai/workspace-service/models"
)

type workspaceRow struct {
	bun.BaseModel `bun:"table:workspaces"`
	ID            uuid.UUID `bun:"id,pk"`
	Name          string    `bun:"name"`
	// Slug left empty is derived from the name by the database.
	Slug        string     `bun:"slug,nullzero"`
	CreatorID   *uuid.UUID `bun:"creator_id"`
	DateCreated time.Time  `bun:"date_created"`
	DateUpdated time.Time  `bun:"date_updated"`
}

type userRow struct {
	bun.BaseModel `bun:"table:users"`
	ID            uuid.UUID `bun:"id,pk"`
	Email         string    `bun:"email"`
	DateCreated   time.Time `bun:"date_created"`
}

type memberRow struct {
	bun.BaseModel `bun:"table:workspace_members"`
	WorkspaceID   uuid.UUID `bun:"workspace_id,pk"`
	UserID        uuid.UUID `bun:"user_id,pk"`
	Role          string    `bun:"role"`
	DateCreated   time.Time `bun:"date_created"`
}

// Credentials is what an operator command hands back, secret shown once.
type Credentials struct {
	WorkspaceID uuid.UUID `json:"workspaceId"`
	UserID      uuid.UUID `json:"userId"`
	APIKeyID    uuid.UUID `json:"apiKeyId"`
	Secret      string    `json:"secret"`
}

// Bootstrap creates a workspace, its first admin and that admin's API key.
func (s *Store) Bootstrap(ctx context.Context, workspaceName, email string) (Credentials, error) {
	var creds Credentials
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		now := pgTime(time.Now())
		ws := workspaceRow{ID: uuid.New(), Name: workspaceName, DateCreated: now, DateUpdated: now}
		if _, err := tx.NewInsert().Model(&ws).Exec(ctx); err != nil {
			return translate(err, nil)
		}
		var err error
		if creds, err = addMember(ctx, tx, ws.ID, email, models.RoleAdmin); err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model(&ws).Set("creator_id = ?", creds.UserID).WherePK().Exec(ctx)
		return translate(err, nil)
	})
	return creds, err
}

// AddMember adds a user to a workspace and issues the member's first API key.
func (s *Store) AddMember(ctx context.Context, workspaceID uuid.UUID, email string, role models.Role) (Credentials, error) {
	var creds Credentials
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		creds, err = addMember(ctx, tx, workspaceID, email, role)
		return err
	})
	return creds, err
}

// addMember is the one way a user joins a workspace (operator commands and
// accepted invites alike): the user, found by e-mail or created, its
// membership and its first API key, in the caller's transaction.
func addMember(ctx context.Context, tx bun.IDB, workspaceID uuid.UUID, email string, role models.Role) (Credentials, error) {
	now := pgTime(time.Now())
	user := userRow{ID: uuid.New(), Email: email, DateCreated: now}
	// An existing user keeps its id; the no-op update makes RETURNING yield it.
	err := tx.NewRaw(`INSERT INTO users (id, email, date_created) VALUES (?, ?, ?)
		ON CONFLICT (lower(email)) DO UPDATE SET email = users.email
		RETURNING id`, user.ID, user.Email, user.DateCreated).Scan(ctx, &user.ID)
	if err != nil {
		return Credentials{}, translate(err, nil)
	}
	member := memberRow{WorkspaceID: workspaceID, UserID: user.ID, Role: string(role), DateCreated: now}
	if _, err := tx.NewInsert().Model(&member).Exec(ctx); err != nil {
		return Credentials{}, translate(err, models.Conflict("already_member", "the user is already a member of the workspace"))
	}
	key, err := secret.NewAPIKey()
	if err != nil {
		return Credentials{}, err
	}
	row := apiKeyRow{
		ID: uuid.New(), WorkspaceID: workspaceID, UserID: user.ID,
		SecureKey: key.Hint, SecretHash: key.Hash, Status: string(models.KeyActive),
		DateCreated: now, DateUpdated: now,
	}
	if _, err := tx.NewInsert().Model(&row).Exec(ctx); err != nil {
		return Credentials{}, translate(err, nil)
	}
	return Credentials{WorkspaceID: workspaceID, UserID: user.ID, APIKeyID: row.ID, Secret: key.Secret}, nil
}
