// Package migrations embeds the schema's SQL files and applies them with
// bun/migrate, a deliberate operator step (`admin migrate`), never at start-up.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed sql/*.sql
var files embed.FS

// Result reports what Up applied.
type Result struct {
	Applied []string `json:"applied"`
}

// Up applies every pending migration.
func Up(ctx context.Context, db *bun.DB) error {
	_, err := Apply(ctx, db)
	return err
}

// Apply applies pending migrations under the migrator's lock and reports them.
func Apply(ctx context.Context, db *bun.DB) (Result, error) {
	m, err := newMigrator(db)
	if err != nil {
		return Result{}, err
	}
	if err := m.Init(ctx); err != nil {
		return Result{}, fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return Result{}, fmt.Errorf("lock migrations: %w", err)
	}
	defer m.Unlock(ctx) //nolint:errcheck // the lock row is best-effort cleanup
	group, err := m.Migrate(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrate: %w", err)
	}
	res := Result{Applied: []string{}}
	for _, mig := range group.Migrations {
		res.Applied = append(res.Applied, mig.Name+"_"+mig.Comment)
	}
	return res, nil
}

// Pending lists unapplied migrations, so readiness can refuse an old schema.
func Pending(ctx context.Context, db *bun.DB) ([]string, error) {
	m, err := newMigrator(db)
	if err != nil {
		return nil, err
	}
	// Not MissingMigrations, which lists applied migrations whose files are gone.
	all, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, err
	}
	pending := all.Unapplied()
	names := make([]string, 0, len(pending))
	for _, mig := range pending {
		names = append(names, mig.Name+"_"+mig.Comment)
	}
	return names, nil
}

func newMigrator(db *bun.DB) (*migrate.Migrator, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return migrate.NewMigrator(db, ms), nil
}
