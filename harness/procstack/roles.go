package procstack

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/harness/devpg"
)

// ensureRole creates a login superuser, as the postgres image does for
// POSTGRES_USER. The cluster trusts loopback connections (devpg), so the
// password is not checked; it is set so that every URL and variable has
// the shape it has in compose.
func ensureRole(ctx context.Context, pg *devpg.Cluster, name, password string) error {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(pg.URL("postgres"))))
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("check role %q: %w", name, err)
	}
	if exists {
		return nil
	}
	// Neither identifiers nor the password can be bound as parameters here.
	if _, err := db.ExecContext(ctx, "CREATE ROLE "+quoteIdent(name)+" LOGIN SUPERUSER PASSWORD "+quoteLiteral(password)); err != nil {
		return fmt.Errorf("create role %q: %w", name, err)
	}
	return nil
}

// ensureDatabase creates a database owned by owner unless it exists, as
// the postgres image does for POSTGRES_DB.
func ensureDatabase(ctx context.Context, pg *devpg.Cluster, name, owner string) error {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(pg.URL("postgres"))))
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("check database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name)+" OWNER "+quoteIdent(owner)); err != nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
