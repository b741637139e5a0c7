package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

func TestMain(m *testing.M) { Main(m) }

// Two parallel tests each create a table in their own database, wait for the
// other to do the same, then check that they see only their own table.
func TestIsolation(t *testing.T) {
	created := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	isolated := func(mine, other string) func(*testing.T) {
		return func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := NewDB(t)
			if _, err := db.ExecContext(ctx, "CREATE TABLE only_"+mine+" (id int)"); err != nil {
				t.Fatal(err)
			}
			close(created[mine])
			select {
			case <-created[other]:
			case <-time.After(time.Minute):
				t.Fatal("the other test did not run alongside this one (needs -parallel >= 2)")
			}
			if !tableExists(t, db, "only_"+mine) {
				t.Errorf("table only_%s missing from its own database", mine)
			}
			if tableExists(t, db, "only_"+other) {
				t.Errorf("table only_%s leaked into another test's database", other)
			}
		}
	}
	t.Run("a", isolated("a", "b"))
	t.Run("b", isolated("b", "a"))
}

func tableExists(t *testing.T, db *bun.DB, name string) bool {
	t.Helper()
	var exists bool
	if err := db.QueryRowContext(context.Background(), "SELECT to_regclass(?) IS NOT NULL", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

// Clones carry the migrated schema, and many can be made at once.
func TestConcurrentClones(t *testing.T) {
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			begin := time.Now()
			db := NewDB(t)
			t.Logf("NewDB took %v", time.Since(begin).Round(time.Millisecond))
			var applied int
			if err := db.QueryRowContext(context.Background(), "SELECT count(*) FROM bun_migrations").Scan(&applied); err != nil {
				t.Fatal(err)
			}
			if applied == 0 {
				t.Error("no migrations recorded in the cloned database")
			}
		})
	}
}

// NewURL's database works with a pool of the test's own and is dropped, even
// with that pool still open, when the test ends.
func TestNewURLDroppedAtCleanup(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		var pool *sql.DB
		t.Cleanup(func() { pool.Close() }) // registered first, so it runs after the drop
		pool = sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(NewURL(t))))
		if err := pool.QueryRow("SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "t_") {
			t.Errorf("database %q", name)
		}
	})
	var n int
	if err := srv.admin.QueryRow("SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("database %s still exists (%d, %v)", name, n, err)
	}
}
