package migrations_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/openlayer-ai/workspace-service/harness/pgtest"
	"github.com/openlayer-ai/workspace-service/internal/migrations"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func openURL(t *testing.T, dsn string) *bun.DB {
	t.Helper()
	db := bun.NewDB(sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(dsn))), pgdialect.New())
	t.Cleanup(func() { db.Close() })
	return db
}

// Apply on an empty database applies every migration once; Pending tracks
// what is left, which is what /readyz relies on.
func TestApplyAndPending(t *testing.T) {
	ctx := context.Background()
	db := openURL(t, pgtest.NewEmptyURL(t))

	if _, err := migrations.Pending(ctx, db); err == nil {
		t.Error("Pending on a database never migrated: want an error (no migrations table)")
	}
	first, err := migrations.Apply(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Applied) == 0 || first.Applied[0] != "20261121000001_initial" {
		t.Fatalf("first Apply applied %v, want the initial migration first", first.Applied)
	}
	pending, err := migrations.Pending(ctx, db)
	if err != nil || len(pending) != 0 {
		t.Fatalf("after Apply: pending %v, err %v", pending, err)
	}
	second, err := migrations.Apply(ctx, db)
	if err != nil || second.Applied == nil || len(second.Applied) != 0 {
		t.Fatalf("second Apply applied %v (err %v), want an empty list", second.Applied, err)
	}

	// Forgetting the record of the last migration makes it pending again.
	last := first.Applied[len(first.Applied)-1]
	if _, err := db.ExecContext(ctx, "DELETE FROM bun_migrations WHERE id = (SELECT max(id) FROM bun_migrations)"); err != nil {
		t.Fatal(err)
	}
	pending, err = migrations.Pending(ctx, db)
	if err != nil || !reflect.DeepEqual(pending, []string{last}) {
		t.Errorf("pending %v (err %v), want [%s]", pending, err, last)
	}
}
