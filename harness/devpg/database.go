package devpg

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/uptrace/bun/driver/pgdriver"
)

// EnsureDatabase creates database name through the server at adminURL unless
// it already exists, so a second start of the dev command reuses its data.
func EnsureDatabase(ctx context.Context, adminURL, name string) error {
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(adminURL)))
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("check database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	// Identifiers cannot be bound as parameters; quote it instead.
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+quoteIdent(name)); err != nil {
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
